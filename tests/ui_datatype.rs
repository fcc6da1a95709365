//! Compile-fail tests of `#[derive(Datatype)]` and of the committed-type rule; the `.stderr`
//! files beside the cases in `ui-tests/datatype/` document every compile-time check. The
//! `pass_*` cases must compile and run.

#[test]
fn datatype_compile_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui-tests/datatype/[!p]*.rs");
    t.pass("ui-tests/datatype/pass_*.rs");
}
