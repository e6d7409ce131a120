#[derive(Clone, Debug, Default, PartialEq, floe::Exception)]
#[floe(module = "M")]
pub struct Oops {
    #[floe(tag = 1)]
    pub code: i32,
}

fn main() {}
