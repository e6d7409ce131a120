#[derive(Clone, Debug, Default, PartialEq, floe::Exception)]
#[floe(module = "M")]
pub struct Root {
    pub reason: String,
}

#[derive(Clone, Debug, Default, PartialEq, floe::Exception)]
#[floe(module = "M")]
pub struct Derived {
    #[floe(base)]
    pub parent: Root,
}

fn main() {}
