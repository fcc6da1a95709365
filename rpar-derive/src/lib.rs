//! Procedural macros of rpar. Each entry point is one line: it hands the tokens to a plain
//! function on `proc_macro2::TokenStream` (unit-testable) and turns a `syn::Error` into
//! `compile_error!`. Users depend on `rpar`, which re-exports these.

mod datatype;
mod spmd;
mod topology;

use proc_macro::TokenStream;

/// Runs a block on N ranks: `spmd!(ranks = N, |world| { … })`. See `rpar`'s documentation.
#[proc_macro]
pub fn spmd(input: TokenStream) -> TokenStream {
    spmd::expand(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// `#[derive(Datatype)]`: the type map of a struct, from `core::mem::offset_of!`. See `rpar`'s
/// `Datatype` trait.
#[proc_macro_derive(Datatype, attributes(rpar))]
pub fn derive_datatype(input: TokenStream) -> TokenStream {
    datatype::derive(input.into()).into()
}

/// Declares virtual topologies as types. See `rpar::Topology`.
///
/// ```text
/// topology! {
///     /// Docs and attributes go on the generated type.
///     pub Torus = cart[4, 4] periodic[true, true];      // periodic[…] optional: all false
///     Ring = cart[8] periodic[true] reorder = true;     // reorder: see rpar::CartComm::cart_map
///     pub Star = graph { 0: [1, 2, 3], 1: [0], 2: [0], 3: [0] };
/// }
/// ```
///
/// A grid gets `DIMS`, `PERIODS`, `NDIMS`, `SIZE`, `REORDER`; a graph `NODES`, `INDEX`, `EDGES`
/// (MPI's arrays), `SIZE`, `REORDER`; both implement `rpar::Topology`, so
/// `spmd!(topology = Torus, |grid| …)` runs on `Torus::SIZE` ranks with a `CartComm<2>` each.
/// Refused at compile time (see `ui-tests/topology/`): a dim of 0, `cart[]`, `periodic` of the
/// wrong length, an edge to a missing node, a node listed twice, nodes that are not 0..n, an
/// empty graph, an unknown key. `#[rpar(crate = "path")]` on a declaration changes the path of
/// rpar in the generated code.
#[proc_macro]
pub fn topology(input: TokenStream) -> TokenStream {
    topology::expand(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
