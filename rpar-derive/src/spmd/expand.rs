//! Expands a parsed `spmd!` into a `Universe` run of a closure.

use super::on_clause;
use super::parse::{Launch, Spmd};
use proc_macro2::TokenStream;
use quote::{quote, ToTokens};

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
    let ty = comm_ty.map_or_else(|| quote!(::rpar::Comm), |t| t.to_token_stream());
    let Launch::Ranks(ranks) = launch;
    Ok(quote! {
        ::rpar::Universe::new(#ranks).run(#capture |#comm: #ty| -> ::rpar::Result<_> { #body })
    })
}
