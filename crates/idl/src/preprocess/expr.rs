//! `#if` expressions: tokens, C operator precedence, `defined`, macro
//! names replaced by their (object-like) definitions.

use super::macros::{Macro, MacroTable};

pub(super) fn tokenize(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            let st = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            toks.push(s[st..i].to_owned());
        } else {
            let two = s.get(i..i + 2).unwrap_or("");
            if ["&&", "||", "==", "!=", "<=", ">=", "<<", ">>"].contains(&two) {
                toks.push(two.to_owned());
                i += 2;
            } else {
                let l = s[i..].chars().next().map(char::len_utf8).unwrap_or(1);
                toks.push(s[i..i + l].to_owned());
                i += l;
            }
        }
    }
    toks
}

pub(super) struct ExprParser<'m> {
    pub(super) toks: Vec<String>,
    pub(super) pos: usize,
    pub(super) macros: &'m MacroTable,
    pub(super) error: Option<String>,
    pub(super) depth: usize,
}

impl ExprParser<'_> {
    fn peek(&self) -> &str {
        self.toks.get(self.pos).map(String::as_str).unwrap_or("")
    }

    fn fail(&mut self, msg: String) -> i64 {
        if self.error.is_none() {
            self.error = Some(msg);
        }
        0
    }

    pub(super) fn ternary(&mut self) -> i64 {
        let c = self.binary(0);
        if self.peek() == "?" {
            self.pos += 1;
            let a = self.ternary();
            if self.peek() != ":" {
                return self.fail("expected `:' in #if expression".to_owned());
            }
            self.pos += 1;
            let b = self.ternary();
            return if c != 0 { a } else { b };
        }
        c
    }

    fn binary(&mut self, min_prec: u8) -> i64 {
        let mut lhs = self.unary();
        loop {
            let op = self.peek().to_owned();
            let prec = match op.as_str() {
                "||" => 1,
                "&&" => 2,
                "|" => 3,
                "^" => 4,
                "&" => 5,
                "==" | "!=" => 6,
                "<" | ">" | "<=" | ">=" => 7,
                "<<" | ">>" => 8,
                "+" | "-" => 9,
                "*" | "/" | "%" => 10,
                _ => return lhs,
            };
            if prec < min_prec || self.error.is_some() {
                return lhs;
            }
            self.pos += 1;
            let rhs = self.binary(prec + 1);
            lhs = match op.as_str() {
                "||" => ((lhs != 0) || (rhs != 0)) as i64,
                "&&" => ((lhs != 0) && (rhs != 0)) as i64,
                "|" => lhs | rhs,
                "^" => lhs ^ rhs,
                "&" => lhs & rhs,
                "==" => (lhs == rhs) as i64,
                "!=" => (lhs != rhs) as i64,
                "<" => (lhs < rhs) as i64,
                ">" => (lhs > rhs) as i64,
                "<=" => (lhs <= rhs) as i64,
                ">=" => (lhs >= rhs) as i64,
                "<<" => lhs.wrapping_shl(rhs as u32),
                ">>" => lhs.wrapping_shr(rhs as u32),
                "+" => lhs.wrapping_add(rhs),
                "-" => lhs.wrapping_sub(rhs),
                "*" => lhs.wrapping_mul(rhs),
                "/" | "%" if rhs == 0 => self.fail("division by zero in #if expression".to_owned()),
                "/" => lhs.wrapping_div(rhs),
                _ => lhs.wrapping_rem(rhs),
            };
        }
    }

    fn unary(&mut self) -> i64 {
        self.depth += 1;
        if self.depth > 200 {
            return self.fail("#if expression nested too deeply".to_owned());
        }
        let t = self.peek().to_owned();
        let v = match t.as_str() {
            "!" => {
                self.pos += 1;
                (self.unary() == 0) as i64
            }
            "-" => {
                self.pos += 1;
                self.unary().wrapping_neg()
            }
            "+" => {
                self.pos += 1;
                self.unary()
            }
            "~" => {
                self.pos += 1;
                !self.unary()
            }
            "(" => {
                self.pos += 1;
                let v = self.ternary();
                if self.peek() != ")" {
                    return self.fail("expected `)' in #if expression".to_owned());
                }
                self.pos += 1;
                v
            }
            "defined" => {
                self.pos += 1;
                let paren = self.peek() == "(";
                if paren {
                    self.pos += 1;
                }
                let name = self.peek().to_owned();
                if name.is_empty()
                    || !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                {
                    return self.fail("`defined' expects a macro name".to_owned());
                }
                self.pos += 1;
                if paren {
                    if self.peek() != ")" {
                        return self.fail("expected `)' after defined(NAME".to_owned());
                    }
                    self.pos += 1;
                }
                self.macros.contains_key(&name) as i64
            }
            "" => self.fail("unexpected end of #if expression".to_owned()),
            _ if t.starts_with(|c: char| c.is_ascii_digit()) => {
                self.pos += 1;
                match parse_pp_int(&t) {
                    Some(v) => v,
                    None => self.fail(format!("invalid integer `{t}' in #if expression")),
                }
            }
            _ if t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') => {
                self.pos += 1;
                match self.macros.get(&t) {
                    Some(Macro::Object(v)) if self.depth < 50 => {
                        let mut sub = ExprParser {
                            toks: tokenize(v),
                            pos: 0,
                            macros: self.macros,
                            error: None,
                            depth: self.depth + 10,
                        };
                        if sub.toks.is_empty() {
                            0
                        } else {
                            sub.ternary()
                        }
                    }
                    _ => 0,
                }
            }
            _ => self.fail(format!("unexpected `{t}' in #if expression")),
        };
        self.depth -= 1;
        v
    }
}

fn parse_pp_int(t: &str) -> Option<i64> {
    let t = t.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok().map(|v| v as i64)
    } else if t.len() > 1 && t.starts_with('0') {
        u64::from_str_radix(&t[1..], 8).ok().map(|v| v as i64)
    } else {
        t.parse::<u64>().ok().map(|v| v as i64)
    }
}
