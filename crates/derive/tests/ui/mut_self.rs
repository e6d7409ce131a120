#[floe::interface(module = "M")]
pub trait Hello {
    async fn hi(&mut self) -> String;
}

fn main() {}
