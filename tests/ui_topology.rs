//! Compile-time checks of `topology!` and of `spmd!(topology = …)`: every case in
//! `ui-tests/topology/` must fail to compile with the message in its `.stderr`.

#[test]
fn topology_compile_errors() {
    trybuild::TestCases::new().compile_fail("ui-tests/topology/*.rs");
}
