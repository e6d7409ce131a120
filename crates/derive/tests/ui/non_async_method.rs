#[floe::interface(module = "M")]
pub trait Hello {
    fn hi(&self) -> String;
}

fn main() {}
