//! `floe-storm admin`: an `icestormadmin` work-alike for users without
//! Debian Ice. Same manager discovery (`IceStormAdmin.TopicManager.*`
//! proxies, or `IceStormAdmin.Host`/`Port` through the `IceStorm/Finder`),
//! same `instance/topic` syntax, same command set, output text and exit
//! codes (checked against `icestormadmin` 3.7.8 by `tests/admin.rs`).
//!
//! Commands are separated by `;` or newlines; words by blanks; single or
//! double quotes keep blanks inside a word.

use std::collections::BTreeMap;
use std::io::Write;

use bytes::Bytes;
use floe::runtime::{Communicator, OperationMode, Proxy, Response};
use floe::wire::{Decoder, Identity, ProxyData};

/// The help text, as `icestormadmin` prints it.
const HELP: &str = "\
help                     Print this message.
exit, quit               Exit this program.
create TOPICS            Add TOPICS.
destroy TOPICS           Remove TOPICS.
link FROM TO [COST]      Link FROM to TO with the optional given COST.
unlink FROM TO           Unlink TO from FROM.
links [INSTANCE-NAME]    Display all links for the topics in the current topic
                         manager, or in the given INSTANCE-NAME.
topics [INSTANCE-NAME]   Display the names of all topics in the current topic
                         manager, or in the given INSTANCE-NAME.
current [INSTANCE-NAME]  Display the current topic manager, or change it to
                         INSTANCE-NAME.
replica [INSTANCE-NAME]  Display replication information for the given INSTANCE-NAME.
subscribers TOPICS       List TOPICS subscribers.
";

/// A failed call: an IceStorm user exception (type id and `name` member)
/// or a local error.
enum CallError {
    User { type_id: String, name: String },
    Local(String),
}

impl From<floe::runtime::Error> for CallError {
    fn from(e: floe::runtime::Error) -> Self {
        CallError::Local(e.to_string())
    }
}

impl From<floe::wire::Error> for CallError {
    fn from(e: floe::wire::Error) -> Self {
        CallError::Local(e.to_string())
    }
}

/// Reads the type id and the `name` member of an IceStorm user exception.
fn decode_user_exception(encaps: floe::wire::Encapsulation) -> CallError {
    let one_one = encaps.encoding == floe::wire::ENCODING_1_1;
    let mut dec = match Decoder::from_encapsulation(encaps) {
        Ok(d) => d,
        Err(e) => return e.into(),
    };
    let r = (|| -> floe::wire::Result<(String, String)> {
        if one_one {
            let flags = dec.read_u8()?;
            // Exception type ids are always strings, whatever the low bits.
            let type_id = dec.read_string()?;
            if flags & 0x10 != 0 {
                dec.read_i32()?;
            }
            Ok((type_id, dec.read_string()?))
        } else {
            let _uses_classes = dec.read_u8()?;
            let type_id = dec.read_string()?;
            dec.read_i32()?;
            Ok((type_id, dec.read_string()?))
        }
    })();
    match r {
        Ok((type_id, name)) => CallError::User { type_id, name },
        Err(e) => e.into(),
    }
}

/// Invokes `op` and returns a decoder over its results.
async fn call(
    proxy: &Proxy,
    op: &str,
    mode: OperationMode,
    params: Bytes,
) -> Result<Decoder, CallError> {
    match proxy.invoke(op, mode, params).await? {
        Response::Ok(e) => Ok(Decoder::from_encapsulation(e)?),
        Response::UserException(e) => Err(decode_user_exception(e)),
    }
}

fn topic_proxy(comm: &Communicator, data: Option<ProxyData>) -> Result<Proxy, CallError> {
    data.map(|d| Proxy::from_data(comm, d))
        .ok_or_else(|| CallError::Local("null topic proxy".into()))
}

/// The admin session: known managers, the current one, output streams.
pub struct Admin<O: Write, E: Write> {
    comm: Communicator,
    managers: BTreeMap<String, Proxy>,
    current: Proxy,
    out: O,
    err: E,
    failed: bool,
}

/// One split command: its words.
type Words = Vec<String>;

/// Splits `text` into commands (`;` or newline) of words (blanks; quotes).
pub fn split_commands(text: &str) -> Vec<Words> {
    let mut cmds = Vec::new();
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    in_word = true;
                }
                ';' | '\n' => {
                    if in_word {
                        words.push(std::mem::take(&mut word));
                        in_word = false;
                    }
                    if !words.is_empty() {
                        cmds.push(std::mem::take(&mut words));
                    }
                }
                c if c.is_whitespace() => {
                    if in_word {
                        words.push(std::mem::take(&mut word));
                        in_word = false;
                    }
                }
                c => {
                    word.push(c);
                    in_word = true;
                }
            },
        }
    }
    if in_word {
        words.push(word);
    }
    if !words.is_empty() {
        cmds.push(words);
    }
    cmds
}

/// Finds the managers from `IceStormAdmin.*` properties (the Finder when no
/// `IceStormAdmin.TopicManager.Default` is set).
///
/// # Errors
///
/// The message `icestormadmin` prints when no manager can be reached.
pub async fn discover(comm: &Communicator) -> Result<(BTreeMap<String, Proxy>, Proxy), String> {
    let props = comm.properties();
    let unreachable = |e: &dyn std::fmt::Display| format!("couldn't reach IceStorm service:\n{e}");
    let mut managers = BTreeMap::new();
    for (_, text) in props.with_prefix("IceStormAdmin.TopicManager.") {
        let p = comm
            .string_to_proxy(&text)
            .map_err(|e| format!("invalid proxy `{text}': {e}"))?;
        managers.insert(p.identity().category.clone(), p);
    }
    let default = match props.get("IceStormAdmin.TopicManager.Default") {
        Some(text) if !text.is_empty() => {
            comm.string_to_proxy(&text).map_err(|e| unreachable(&e))?
        }
        _ => {
            let host = props.get("IceStormAdmin.Host").unwrap_or_default();
            let port = props.get("IceStormAdmin.Port").unwrap_or_default();
            let finder = comm
                .string_to_proxy(&format!("IceStorm/Finder:tcp -h {host} -p {port} -t 3000"))
                .map_err(|e| unreachable(&e))?;
            let mut dec = call(
                &finder,
                "getTopicManager",
                OperationMode::Normal,
                finder.empty_params(),
            )
            .await
            .map_err(|e| unreachable(&local_text(e)))?;
            let data: Option<ProxyData> = dec.read().map_err(|e| unreachable(&e))?;
            // The Finder's manager is the current one only: icestormadmin
            // knows instance names from its TopicManager properties alone.
            topic_proxy(comm, data).map_err(|e| unreachable(&local_text(e)))?
        }
    };
    // Contact the default manager once, as icestormadmin does.
    call(
        &default,
        "retrieveAll",
        OperationMode::Idempotent,
        default.empty_params(),
    )
    .await
    .map_err(|e| unreachable(&local_text(e)))?;
    Ok((managers, default))
}

fn local_text(e: CallError) -> String {
    match e {
        CallError::User { type_id, name } => format!("{type_id} {name}"),
        CallError::Local(s) => s,
    }
}

impl<O: Write, E: Write> Admin<O, E> {
    /// A session over discovered managers, writing to `out` and `err`.
    pub fn new(
        comm: Communicator,
        managers: BTreeMap<String, Proxy>,
        current: Proxy,
        out: O,
        err: E,
    ) -> Self {
        Admin {
            comm,
            managers,
            current,
            out,
            err,
            failed: false,
        }
    }

    /// Whether any command failed (the exit code is 1 then).
    pub fn failed(&self) -> bool {
        self.failed
    }

    fn error(&mut self, text: &str) {
        let _ = writeln!(self.err, "error: {text}");
        self.failed = true;
    }

    fn usage(&mut self, cmd: &str, need: &str) {
        self.error(&format!(
            "`{cmd}' requires {need} (type `help' for more info)"
        ));
    }

    /// Runs commands; returns `false` after `exit`/`quit`.
    pub async fn run(&mut self, commands: &[Words]) -> bool {
        for words in commands {
            if !self.command(words).await {
                return false;
            }
        }
        true
    }

    /// The manager for `instance` (the current one when `None`).
    fn manager(&mut self, instance: Option<&str>) -> Option<Proxy> {
        match instance {
            None => Some(self.current.clone()),
            Some(i) => match self.managers.get(i) {
                Some(p) => Some(p.clone()),
                None => {
                    self.error(&format!("couldn't find IceStorm service `{i}'"));
                    None
                }
            },
        }
    }

    /// Splits `inst/name` into its manager and topic name.
    fn topic_name(&mut self, text: &str) -> Option<(Proxy, String)> {
        match text.split_once('/') {
            Some((inst, name)) => Some((self.manager(Some(inst))?, name.to_string())),
            None => Some((self.current.clone(), text.to_string())),
        }
    }

    fn report(&mut self, e: CallError, warn: bool) {
        let text = match e {
            CallError::User { type_id, name } => match type_id.as_str() {
                "::IceStorm::NoSuchTopic" => format!("couldn't find topic `{name}'"),
                "::IceStorm::TopicExists" => format!("topic `{name}' exists"),
                "::IceStorm::LinkExists" => format!("link `{name}' already exists"),
                "::IceStorm::NoSuchLink" => format!("couldn't find link `{name}'"),
                other => other.to_string(),
            },
            CallError::Local(s) => s,
        };
        if warn {
            let _ = writeln!(self.err, "warning: {text}");
        } else {
            self.error(&text);
        }
    }

    async fn retrieve(&mut self, text: &str) -> Result<Proxy, Option<CallError>> {
        let (mgr, name) = self.topic_name(text).ok_or(None)?;
        let params = mgr.encode_params(|e| e.write(&name));
        let mut dec = call(&mgr, "retrieve", OperationMode::Idempotent, params)
            .await
            .map_err(Some)?;
        let data: Option<ProxyData> = dec.read().map_err(|e| Some(e.into()))?;
        topic_proxy(&self.comm, data).map_err(Some)
    }

    async fn retrieve_all(&mut self, mgr: &Proxy) -> Result<Vec<(String, Proxy)>, CallError> {
        let mut dec = call(
            mgr,
            "retrieveAll",
            OperationMode::Idempotent,
            mgr.empty_params(),
        )
        .await?;
        let n = dec.read_size()?;
        let mut topics = Vec::new();
        for _ in 0..n {
            let name = dec.read_string()?;
            let data: Option<ProxyData> = dec.read()?;
            topics.push((name, topic_proxy(&self.comm, data)?));
        }
        Ok(topics)
    }

    async fn command(&mut self, words: &[String]) -> bool {
        let Some((cmd, args)) = words.split_first() else {
            return true;
        };
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        match cmd.as_str() {
            "help" => {
                let _ = self.out.write_all(HELP.as_bytes());
            }
            "exit" | "quit" => return false,
            "create" => {
                if args.is_empty() {
                    self.usage("create", "at least one argument");
                }
                for a in args {
                    let Some((mgr, name)) = self.topic_name(a) else {
                        continue;
                    };
                    let params = mgr.encode_params(|e| e.write(&name));
                    if let Err(e) = call(&mgr, "create", OperationMode::Normal, params).await {
                        self.report(e, false);
                    }
                }
            }
            "destroy" => {
                if args.is_empty() {
                    self.usage("destroy", "at least one argument");
                }
                let warn = args.len() > 1;
                for a in &args {
                    match self.retrieve(a).await {
                        Ok(t) => {
                            if let Err(e) =
                                call(&t, "destroy", OperationMode::Normal, t.empty_params()).await
                            {
                                self.report(e, false);
                            }
                        }
                        Err(Some(e)) => self.report(e, warn),
                        Err(None) => {}
                    }
                }
            }
            "link" => {
                if args.len() != 2 && args.len() != 3 {
                    self.usage("link", "two or three arguments");
                    return true;
                }
                let from = match self.retrieve(args[0]).await {
                    Ok(t) => t,
                    Err(e) => {
                        if let Some(e) = e {
                            self.report(e, false);
                        }
                        return true;
                    }
                };
                let to = match self.retrieve(args[1]).await {
                    Ok(t) => t,
                    Err(e) => {
                        if let Some(e) = e {
                            self.report(e, false);
                        }
                        return true;
                    }
                };
                let cost = args.get(2).map_or(0, |c| atoi(c));
                let to_data = to.to_data();
                let params = from.encode_params(|e| {
                    e.write(&Some(to_data));
                    e.write(&cost);
                });
                if let Err(e) = call(&from, "link", OperationMode::Normal, params).await {
                    self.report(e, false);
                }
            }
            "unlink" => {
                if args.len() != 2 {
                    self.usage("unlink", "exactly two arguments");
                    return true;
                }
                let mut topics = Vec::new();
                for a in &args {
                    match self.retrieve(a).await {
                        Ok(t) => topics.push(t),
                        Err(e) => {
                            if let Some(e) = e {
                                self.report(e, false);
                            }
                            return true;
                        }
                    }
                }
                let to_data = topics[1].to_data();
                let params = topics[0].encode_params(|e| e.write(&Some(to_data)));
                if let Err(e) = call(&topics[0], "unlink", OperationMode::Normal, params).await {
                    self.report(e, false);
                }
            }
            "links" | "topics" => {
                if args.len() > 1 {
                    self.usage(cmd, "at most one argument");
                    return true;
                }
                let Some(mgr) = self.manager(args.first().copied()) else {
                    return true;
                };
                let topics = match self.retrieve_all(&mgr).await {
                    Ok(t) => t,
                    Err(e) => {
                        self.report(e, false);
                        return true;
                    }
                };
                for (name, topic) in topics {
                    if cmd == "topics" {
                        let _ = writeln!(self.out, "{name}");
                        continue;
                    }
                    match self.links(&topic).await {
                        Ok(links) => {
                            for (to, cost) in links {
                                let _ = writeln!(self.out, "{name} to {to} with cost {cost}");
                            }
                        }
                        Err(e) => self.report(e, false),
                    }
                }
            }
            "current" => {
                if args.len() > 1 {
                    self.usage("current", "at most one argument");
                    return true;
                }
                match args.first() {
                    None => {
                        let _ = writeln!(self.out, "{}", self.current.identity());
                    }
                    Some(i) => {
                        if let Some(p) = self.manager(Some(i)) {
                            self.current = p;
                        }
                    }
                }
            }
            "subscribers" => {
                if args.is_empty() {
                    let _ = writeln!(
                        self.err,
                        "error: subscribers' requires at least one argument (type `help' for more info) "
                    );
                    self.failed = true;
                    return true;
                }
                for a in &args {
                    let t = match self.retrieve(a).await {
                        Ok(t) => t,
                        Err(e) => {
                            if let Some(e) = e {
                                self.report(e, false);
                            }
                            continue;
                        }
                    };
                    match self.subscribers(&t).await {
                        Ok(ids) => {
                            let _ = writeln!(self.out, "{a}: subscribers:");
                            for id in ids {
                                let _ = writeln!(self.out, "\t{id}");
                            }
                        }
                        Err(e) => self.report(e, false),
                    }
                }
            }
            "replica" => {
                self.error("This topic is not replicated");
            }
            other => {
                let _ = writeln!(self.err, "error: syntax error");
                let _ = writeln!(
                    self.err,
                    "unknown command `{other}' (type `help' for more info)"
                );
                self.failed = true;
            }
        }
        let _ = self.out.flush();
        true
    }

    async fn links(&mut self, topic: &Proxy) -> Result<Vec<(String, i32)>, CallError> {
        let mut dec = call(
            topic,
            "getLinkInfoSeq",
            OperationMode::Idempotent,
            topic.empty_params(),
        )
        .await?;
        let n = dec.read_size()?;
        let mut links = Vec::new();
        for _ in 0..n {
            let _topic: Option<ProxyData> = dec.read()?;
            let name = dec.read_string()?;
            let cost = dec.read_i32()?;
            links.push((name, cost));
        }
        Ok(links)
    }

    async fn subscribers(&mut self, topic: &Proxy) -> Result<Vec<Identity>, CallError> {
        let mut dec = call(
            topic,
            "getSubscribers",
            OperationMode::Normal,
            topic.empty_params(),
        )
        .await?;
        Ok(dec.read()?)
    }
}

/// C `atoi`: optional blanks and sign, then digits; 0 when none.
fn atoi(s: &str) -> i32 {
    let s = s.trim_start();
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for b in digits.bytes().take_while(u8::is_ascii_digit) {
        v = (v * 10 + i64::from(b - b'0')).min(i64::from(i32::MAX) + 1);
    }
    let v = if neg { -v } else { v };
    // Clamped above: fits after the clamp below.
    i32::try_from(v.clamp(i64::from(i32::MIN), i64::from(i32::MAX))).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_commands_words_and_quotes() {
        let c = split_commands("create a 'x y'; topics\nlinks  IceStorm ;;");
        assert_eq!(
            c,
            vec![
                vec!["create".to_string(), "a".into(), "x y".into()],
                vec!["topics".to_string()],
                vec!["links".to_string(), "IceStorm".into()],
            ]
        );
    }

    #[test]
    fn atoi_as_c() {
        assert_eq!(atoi("x"), 0);
        assert_eq!(atoi("12ab"), 12);
        assert_eq!(atoi("-3"), -3);
    }
}
