//! Expands checked `topology!` declarations: each becomes a unit struct with its shape as
//! associated constants and an `impl ::rpar::Topology` (or the path `#[rpar(crate = "…")]`
//! gives). A declaration with errors still becomes its (empty) struct, so the user sees the
//! errors and not a cascade of "type not found".

use super::check::{check, Checked};
use super::parse::{Input, Item};
use proc_macro2::TokenStream;
use quote::quote;

/// The whole macro: parse, check, expand.
pub(crate) fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let input: Input = syn::parse2(input)?;
    let mut errors = input.errors;
    let mut out = TokenStream::new();
    for item in &input.items {
        let checked = check(item, &mut errors);
        out.extend(declare(item, checked.as_ref()));
    }
    for e in errors {
        out.extend(e.to_compile_error());
    }
    Ok(out)
}

/// The struct, and (when the declaration checked out) its constants and `Topology` impl.
fn declare(item: &Item, checked: Option<&Checked>) -> TokenStream {
    let Item {
        attrs,
        vis,
        name,
        krate,
        ..
    } = item;
    let has_doc = attrs.iter().any(|a| a.path().is_ident("doc"));
    let reorder = item.reorder.as_ref().is_some_and(|b| b.value);
    let Some(checked) = checked else {
        return quote! { #(#attrs)* #vis struct #name; };
    };
    let (summary, consts, comm_ty, create) = match checked {
        Checked::Cart(c) => {
            let (dims, periods) = (&c.dims, &c.periods);
            let n = dims.len();
            let shape = dims
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" x ");
            let summary = format!(
                "A {shape} Cartesian grid (periodic: {periods:?}), declared with `topology!`."
            );
            let consts = quote! {
                /// The grid's extent along each dim (MPI_Cart_create's `dims`).
                pub const DIMS: [usize; #n] = [#(#dims),*];
                /// Whether each dim wraps around (MPI_Cart_create's `periods`).
                pub const PERIODS: [bool; #n] = [#(#periods),*];
                /// The number of dims (MPI_Cart_create's `ndims`, MPI_Cartdim_get).
                pub const NDIMS: usize = #n;
                /// The number of ranks: the product of the dims.
                pub const SIZE: usize = 1 #(* #dims)*;
            };
            let create = quote! {
                #krate::CartComm::create(comm, Self::DIMS, Self::PERIODS, Self::REORDER)
            };
            (summary, consts, quote!(#krate::CartComm<#n>), create)
        }
        Checked::Graph(g) => {
            let (index, edges) = (&g.index, &g.edges);
            let (n, m) = (index.len(), edges.len());
            let summary =
                format!("A graph of {n} nodes and {m} edge entries, declared with `topology!`.");
            let consts = quote! {
                /// The number of nodes (MPI_Graph_create's `nnodes`).
                pub const NODES: usize = #n;
                /// MPI's index array: the cumulative degrees of nodes 0, 1, ….
                pub const INDEX: [usize; #n] = [#(#index),*];
                /// MPI's edges array: the neighbour lists of nodes 0, 1, …, concatenated.
                pub const EDGES: [usize; #m] = [#(#edges),*];
                /// The number of ranks: one per node.
                pub const SIZE: usize = #n;
            };
            let create = quote! {
                #krate::GraphComm::create(comm, &Self::INDEX, &Self::EDGES, Self::REORDER)
            };
            (summary, consts, quote!(#krate::GraphComm), create)
        }
    };
    let doc = (!has_doc).then(|| quote!(#[doc = #summary]));
    quote! {
        #(#attrs)*
        #doc
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        #vis struct #name;

        const _: () = {
            #[automatically_derived]
            impl #name {
                #consts
                /// Whether ranks may be renumbered (`reorder = true`, MPI's `reorder`; see
                /// `CartComm::cart_map`).
                pub const REORDER: bool = #reorder;
            }

            #[automatically_derived]
            impl #krate::Topology for #name {
                type Comm = #comm_ty;
                const SIZE: usize = #name::SIZE;
                fn create(comm: &#krate::Comm) -> #krate::Result<::core::option::Option<#comm_ty>> {
                    #create
                }
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grid_carries_its_shape() {
        let out = expand(quote!(pub Torus = cart[4, 2] periodic[true, false];))
            .unwrap()
            .to_string();
        assert!(
            out.contains("pub const DIMS : [usize ; 2usize] = [4usize , 2usize]"),
            "{out}"
        );
        assert!(
            out.contains("pub const SIZE : usize = 1 * 4usize * 2usize"),
            "{out}"
        );
        assert!(
            out.contains("type Comm = :: rpar :: CartComm < 2usize >"),
            "{out}"
        );
    }

    #[test]
    fn the_crate_path_can_be_overridden() {
        let out = expand(quote!(#[rpar(crate = "my::rpar")] T = graph { 0: [] };))
            .unwrap()
            .to_string();
        assert!(out.contains("impl my :: rpar :: Topology for T"), "{out}");
        assert_eq!(
            out.matches(":: rpar ::").count(),
            out.matches("my :: rpar ::").count()
        );
        assert!(!out.contains("# [rpar"), "{out}");
    }

    #[test]
    fn a_bad_declaration_still_declares_its_type() {
        let out = expand(quote!(Bad = cart[0];)).unwrap().to_string();
        assert!(out.contains("struct Bad ;"), "{out}");
        assert!(out.contains("compile_error"), "{out}");
    }
}
