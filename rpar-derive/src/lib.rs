//! Procedural macros of rpar. Each entry point is one line: it hands the tokens to a plain
//! function on `proc_macro2::TokenStream` (unit-testable) and turns a `syn::Error` into
//! `compile_error!`. Users depend on `rpar`, which re-exports these.

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

/// Declares virtual topologies as types: `topology! { pub Torus = cart[4, 4] periodic[true, true]; }`.
/// See `rpar::Topology`.
#[proc_macro]
pub fn topology(input: TokenStream) -> TokenStream {
    topology::expand(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
