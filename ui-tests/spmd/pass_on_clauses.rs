// `on` clauses at any depth, a variable named `on`, a typed parameter, `move`.
use rpar::prelude::*;
fn main() {
    let n = 3;
    let out = spmd!(ranks = n, move |world: Comm| {
        let on = world.rank() * 2;
        let mut marks = Vec::new();
        on root {
            marks.push("root");
        }
        for k in 0..n {
            on rank(k) {
                marks.push("mine");
            }
        }
        Ok((on, marks))
    })
    .unwrap();
    assert_eq!(out[0], (0, vec!["root", "mine"]));
    assert_eq!(out[2], (4, vec!["mine"]));
}
