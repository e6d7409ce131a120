#[floe::interface(module = "M")]
pub trait Hello {
    async fn hi(&self) -> (String, i32);
}

fn main() {}
