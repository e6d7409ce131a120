#[derive(Clone, Debug, Default, PartialEq, floe::Class)]
#[floe(module = "M")]
pub struct Node {
    #[floe(tag = 1)]
    pub a: Option<i32>,
    #[floe(tag = 1)]
    pub b: Option<String>,
}

fn main() {}
