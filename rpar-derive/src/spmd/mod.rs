//! `spmd!`: parse the arguments (`parse`), rewrite `on …` clauses in the body (`on_clause`),
//! and expand to a `Universe` run (`expand`).

mod expand;
mod on_clause;
mod parse;

pub(crate) use expand::expand;
