//! Compile-time checks of `spmd!`: each case in `ui-tests/spmd/` with the error it must give.

#[test]
fn spmd_misuse_is_refused_with_a_clear_message() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui-tests/spmd/[!p]*.rs");
    t.pass("ui-tests/spmd/pass_*.rs");
}
