#[derive(Clone, Debug, Default, PartialEq, floe::Struct)]
#[floe(module = "M")]
pub struct NotAnException {
    pub x: i32,
}

#[derive(Clone, Debug, Default, PartialEq, floe::Exception)]
#[floe(module = "M")]
pub struct Derived {
    #[floe(base)]
    pub base: NotAnException,
    pub code: i32,
}

fn main() {}
