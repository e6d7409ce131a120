#[derive(Clone, Debug, Default, PartialEq, floe::Struct)]
#[floe(module = "M")]
pub struct Nothing {}

fn main() {}
