//! Procedural macros of rpar. Each entry point is one line: it hands the tokens to a plain
//! function on `proc_macro2::TokenStream` (unit-testable) and turns a `syn::Error` into
//! `compile_error!`. Users depend on `rpar`, which re-exports these: `rpar::spmd!`,
//! `rpar::topology!` and `#[derive(rpar::Datatype)]`. Their examples are in `rpar`'s
//! documentation, where they run as doc tests against the runtime they expand to.

mod datatype;
mod spmd;
mod topology;

use proc_macro::TokenStream;

/// The macro behind `rpar::spmd!`: `spmd!(ranks = N, |world| { … })` expands to
/// `::rpar::Universe::new(N).run(|world: ::rpar::Comm| -> ::rpar::Result<_> { … })`, with each
/// `on root { … }` / `on rank(k) { … }` in the body rewritten to an `if` on the rank;
/// `spmd!(topology = T, |grid| { … })` runs `T::SIZE` ranks and builds each rank's topology
/// communicator with `rpar::Topology::create` first. Use it through `rpar`, whose
/// documentation has runnable examples.
#[proc_macro]
pub fn spmd(input: TokenStream) -> TokenStream {
    spmd::expand(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// The derive behind `#[derive(rpar::Datatype)]`: an `unsafe impl rpar::Datatype` whose
/// `LAYOUT` places each field's layout at its `core::mem::offset_of!` offset, extent
/// `size_of::<Self>()`, with `const` assertions that every field lies inside the struct (and
/// that `#[rpar(skip)]` fields are zero-sized), so that the type map is a constant checked by
/// the compiler. Use it through `rpar`, whose `Datatype` trait has runnable examples.
#[proc_macro_derive(Datatype, attributes(rpar))]
pub fn derive_datatype(input: TokenStream) -> TokenStream {
    datatype::derive(input.into()).into()
}

/// The macro behind `rpar::topology!`: declares virtual topologies as types implementing
/// `rpar::Topology` (runnable examples are in `rpar`'s documentation).
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
