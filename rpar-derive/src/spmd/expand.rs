//! Expands a parsed `spmd!` into a `Universe` run of a closure.

use super::on_clause;
use super::parse::{Launch, Spmd};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;

/// The whole macro: parse, rewrite `on` clauses, expand.
pub(crate) fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let spmd: Spmd = syn::parse2(input)?;
    let mut errors = Vec::new();
    let body = on_clause::rewrite(spmd.body.clone(), &spmd.comm, &mut errors);
    if let Some(mut first) = errors.pop() {
        for e in errors {
            first.combine(e);
        }
        return Err(first);
    }
    let Spmd {
        launch,
        capture,
        comm,
        comm_ty,
        ..
    } = spmd;
    let body: syn::Expr = syn::parse2(body)?;
    match launch {
        Launch::Ranks(ranks) => {
            let ty = comm_ty.map_or_else(|| quote!(::rpar::Comm), |t| t.to_token_stream());
            Ok(quote! {
                ::rpar::Universe::new(#ranks).run(#capture |#comm: #ty| -> ::rpar::Result<_> { #body })
            })
        }
        Launch::Topology { ty, ranks } => {
            let topo = quote!(<#ty as ::rpar::Topology>);
            let comm_ty = comm_ty.map_or_else(|| quote!(#topo::Comm), |t| t.to_token_stream());
            // `ranks` beside a topology must be a constant equal to its size.
            let check = ranks.map(|ranks| {
                quote_spanned! {ranks.span()=>
                    const _: () = ::core::assert!(
                        (#ranks) == #topo::SIZE,
                        "`ranks` differs from the size of the `topology`: give one or make them equal"
                    );
                }
            });
            Ok(quote! {{
                #check
                ::rpar::Universe::new(#topo::SIZE).run(#capture |__rpar_world: ::rpar::Comm| -> ::rpar::Result<_> {
                    let #comm: #comm_ty = #topo::create(&__rpar_world)?.ok_or_else(|| {
                        ::rpar::Error::user("spmd!: the topology left out a rank of a world of its own size")
                    })?;
                    #body
                })
            }})
        }
    }
}
