//! `topology!`: parse the declarations (`parse`), check them (`check`), expand each into a type
//! implementing `rpar::Topology` (`expand`).
//!
//! ```text
//! topology! {
//!     /// docs
//!     pub Torus = cart[4, 4] periodic[true, true] reorder = false;
//!     pub Star = graph { 0: [1, 2, 3], 1: [0], 2: [0], 3: [0] };
//! }
//! ```

mod check;
mod expand;
mod parse;

pub(crate) use expand::expand;
