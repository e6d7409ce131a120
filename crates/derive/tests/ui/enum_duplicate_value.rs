#[derive(Clone, Copy, Debug, PartialEq, floe::Enum)]
#[floe(module = "M")]
pub enum Level {
    Low = 2,
    Mid = 1,
    High,
}

fn main() {}
