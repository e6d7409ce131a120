#[floe::interface(module = "M")]
pub trait Hello {
    async fn hi(&self) -> String {
        String::new()
    }
}

fn main() {}
