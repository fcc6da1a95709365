//! Procedural macros of rpar. Each entry point is one line: it hands the tokens to a plain
//! function on `proc_macro2::TokenStream` (unit-testable) and turns a `syn::Error` into
//! `compile_error!`. Users depend on `rpar`, which re-exports these.

mod datatype;
mod spmd;

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
