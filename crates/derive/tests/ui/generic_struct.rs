#[derive(Clone, Debug, Default, PartialEq, floe::Struct)]
#[floe(module = "M")]
pub struct Wrapper<T> {
    pub x: T,
}

fn main() {}
