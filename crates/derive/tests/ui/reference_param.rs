#[floe::interface(module = "M")]
pub trait Hello {
    async fn hi(&self, name: &str) -> String;
}

fn main() {}
