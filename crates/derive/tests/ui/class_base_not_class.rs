#[derive(Clone, Debug, Default, PartialEq, floe::Exception)]
#[floe(module = "M")]
pub struct Oops {
    pub reason: String,
}

#[derive(Clone, Debug, Default, floe::Class)]
#[floe(module = "M")]
pub struct Node {
    #[floe(base)]
    pub base: Oops,
}

fn main() {}
