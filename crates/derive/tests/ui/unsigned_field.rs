#[derive(Clone, Debug, Default, PartialEq, floe::Struct)]
#[floe(module = "M")]
pub struct Counter {
    pub count: u32,
}

fn main() {}
