//! Random small Slice programs (deterministic seed) for the differential
//! tests: in Ice 3.7's style against slice2cpp 3.7 (`differential.rs`),
//! and in Ice 3.8's style against slice2py 3.8 (`ice38/differential.rs`).

use std::fmt::Write as _;

/// Which compiler the programs are written for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `module M`, `extends`, `local` definitions.
    Ice37,
    /// `module M::N`, `:` or `extends`, names that only 3.8 allows
    /// (`my_x`, `IceY`, `local`, a definition named like its module).
    Ice38,
}

/// xorshift64*: deterministic, no dependency.
pub struct Rng(pub u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const NAMES: &[&str] = &[
    "A", "B", "C", "a", "b", "S", "T", "E", "I", "J", "X", "Q", "D", "s",
];
const NAMES_38: &[&str] = &[
    "A", "B", "C", "a", "b", "S", "T", "E", "I", "J", "X", "Q", "D", "s", "my_x", "IceY", "local",
    "N",
];
const PRIMS: &[&str] = &[
    "int", "long", "short", "byte", "bool", "string", "float", "double",
];
const OTHER: &[&str] = &["Object", "Object*", "Value", "LocalObject"];
const LITERALS: &[&str] = &[
    "0",
    "1",
    "-1",
    "255",
    "256",
    "32768",
    "2147483647",
    "2147483648",
    "1.5",
    "\"x\"",
    "true",
    "false",
    "0x7f",
    "07",
];

/// Generates programs of one [`Style`].
pub struct Generator {
    rng: Rng,
    style: Style,
}

impl Generator {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64, style: Style) -> Generator {
        Generator {
            rng: Rng(seed | 1),
            style,
        }
    }

    /// One program: a module holding one to four definitions.
    pub fn program(&mut self) -> String {
        let body: Vec<String> = (0..1 + self.rng.below(4))
            .map(|_| self.definition(1))
            .collect();
        let module = match self.style {
            Style::Ice37 => "M",
            Style::Ice38 => "M::N",
        };
        format!("module {module} {{\n{}\n}}\n", body.join("\n"))
    }

    fn name(&mut self) -> &'static str {
        match self.style {
            Style::Ice37 => self.rng.pick(NAMES),
            Style::Ice38 => self.rng.pick(NAMES_38),
        }
    }

    fn ty(&mut self) -> String {
        let r = &mut self.rng;
        match r.below(100) {
            0..=69 => r.pick(PRIMS).to_owned(),
            70..=74 => r.pick(OTHER).to_owned(),
            75..=89 => {
                let n = self.name();
                format!("{n}{}", if self.rng.chance(30) { "*" } else { "" })
            }
            _ => {
                let scope = match self.style {
                    Style::Ice37 => self.rng.pick(&["::M::", "M::", "N::", "::"]),
                    Style::Ice38 => self.rng.pick(&["::M::N::", "M::N::", "N::", "::"]),
                };
                format!("{scope}{}", self.name())
            }
        }
    }

    fn literal(&mut self) -> String {
        if self.rng.chance(25) {
            self.name().to_owned()
        } else {
            self.rng.pick(LITERALS).to_owned()
        }
    }

    fn tag(&mut self) -> String {
        if self.rng.chance(30) {
            let t = self.rng.pick(&["0", "1", "2", "3", "-1", "X"]);
            format!("optional({t}) ")
        } else {
            String::new()
        }
    }

    fn member(&mut self) -> String {
        // Only literals as member defaults: slice2cpp 3.7 silently accepts
        // an undefined name there (`bool x = nosuch;`) and emits C++ that
        // does not compile; slice2rs rejects it.
        let default = if self.rng.chance(20) {
            format!(" = {}", self.rng.pick(LITERALS))
        } else {
            String::new()
        };
        let (tag, ty) = (self.tag(), self.ty());
        format!("{tag}{ty} {}{default};", self.name())
    }

    fn operation(&mut self) -> String {
        let ret = if self.rng.chance(40) {
            "void".to_owned()
        } else {
            format!("{}{}", self.tag(), self.ty())
        };
        let params: Vec<String> = (0..self.rng.below(4))
            .map(|_| {
                let out = if self.rng.chance(30) { "out " } else { "" };
                let (tag, ty) = (self.tag(), self.ty());
                format!("{out}{tag}{ty} {}", self.name())
            })
            .collect();
        let throws = if self.rng.chance(30) {
            let list: Vec<&str> = (0..1 + self.rng.below(2)).map(|_| self.name()).collect();
            format!(" throws {}", list.join(", "))
        } else {
            String::new()
        };
        let idem = if self.rng.chance(20) {
            "idempotent "
        } else {
            ""
        };
        format!(
            "{idem}{ret} {}({}){throws};",
            self.name(),
            params.join(", ")
        )
    }

    /// ` extends ` (or, in Ice 3.8's style, sometimes ` : `).
    fn extends(&mut self) -> &'static str {
        if self.style == Style::Ice38 && self.rng.chance(50) {
            " : "
        } else {
            " extends "
        }
    }

    fn definition(&mut self, depth: usize) -> String {
        let metadata = if self.rng.chance(10) {
            "[\"amd\", \"cpp:const\"] "
        } else {
            ""
        };
        // Ice 3.8 has no local definitions.
        let local = if self.rng.chance(10) && self.style == Style::Ice37 {
            "local "
        } else {
            ""
        };
        let local = format!("{metadata}{local}");
        let local = local.as_str();
        let n = self.name();
        let mut s = String::new();
        match self.rng.below(11) {
            0 => {
                let body: Vec<String> = (0..self.rng.below(4)).map(|_| self.member()).collect();
                let _ = write!(s, "{local}struct {n} {{ {} }}", body.join(" "));
            }
            1 => {
                let ext = if self.rng.chance(30) {
                    format!("{}{}", self.extends(), self.name())
                } else {
                    String::new()
                };
                let body: Vec<String> = (0..self.rng.below(4))
                    .map(|_| {
                        if self.rng.chance(80) {
                            self.member()
                        } else {
                            self.operation()
                        }
                    })
                    .collect();
                let _ = write!(s, "{local}class {n}{ext} {{ {} }}", body.join(" "));
            }
            2 => {
                let ext = if self.rng.chance(30) {
                    let ext = self.extends();
                    let l: Vec<&str> = (0..1 + self.rng.below(2)).map(|_| self.name()).collect();
                    format!("{ext}{}", l.join(", "))
                } else {
                    String::new()
                };
                let body: Vec<String> = (0..self.rng.below(4)).map(|_| self.operation()).collect();
                let _ = write!(s, "{local}interface {n}{ext} {{ {} }}", body.join(" "));
            }
            3 => {
                let ext = if self.rng.chance(30) {
                    format!("{}{}", self.extends(), self.name())
                } else {
                    String::new()
                };
                let body: Vec<String> = (0..self.rng.below(3)).map(|_| self.member()).collect();
                let _ = write!(s, "{local}exception {n}{ext} {{ {} }}", body.join(" "));
            }
            4 => {
                let _ = write!(s, "{local}sequence<{}> {n};", self.ty());
            }
            5 => {
                let (k, v) = (self.ty(), self.ty());
                let _ = write!(s, "{local}dictionary<{k}, {v}> {n};");
            }
            6 => {
                let es: Vec<String> = (0..self.rng.below(4))
                    .map(|_| {
                        let v = if self.rng.chance(30) {
                            format!(" = {}", self.literal())
                        } else {
                            String::new()
                        };
                        format!("{}{v}", self.name())
                    })
                    .collect();
                let _ = write!(s, "{local}enum {n} {{ {} }}", es.join(", "));
            }
            7 => {
                let (ty, lit) = (self.ty(), self.literal());
                let _ = write!(s, "const {ty} {n} = {lit};");
            }
            8 => {
                let _ = write!(s, "{local}class {n};");
            }
            9 => {
                let _ = write!(s, "{local}interface {n};");
            }
            _ if depth < 2 => {
                let body: Vec<String> = (0..self.rng.below(4))
                    .map(|_| self.definition(depth + 1))
                    .collect();
                let module = match self.style {
                    Style::Ice37 => self.rng.pick(&["M", "N", "m"]),
                    Style::Ice38 => self.rng.pick(&["M", "N", "m", "P::Q"]),
                };
                let _ = write!(s, "module {module} {{ {} }}", body.join("\n"));
            }
            _ => {}
        }
        s
    }
}
