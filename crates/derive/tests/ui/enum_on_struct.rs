#[derive(Clone, Copy, Debug, PartialEq, floe::Enum)]
#[floe(module = "M")]
pub struct NotAnEnum {
    pub x: i32,
}

fn main() {}
