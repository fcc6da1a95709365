//! Compile-fail tests of `#[derive(Datatype)]` and of the committed-type rule; the `.stderr`
//! files beside the cases in `ui-tests/datatype/` document every compile-time check.

#[test]
fn datatype_compile_errors() {
    trybuild::TestCases::new().compile_fail("ui-tests/datatype/*.rs");
}
