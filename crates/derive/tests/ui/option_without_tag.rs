#[derive(Clone, Debug, Default, PartialEq, floe::Exception)]
#[floe(module = "M")]
pub struct Oops {
    pub code: Option<i32>,
}

fn main() {}
