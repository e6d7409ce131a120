//! `floe-storm admin`: an `icestormadmin` work-alike for users without
//! Debian Ice. Same manager discovery (`IceStormAdmin.TopicManager.*`
//! proxies, or `IceStormAdmin.Host`/`Port` through the `IceStorm/Finder`),
//! same `instance/topic` syntax, same command set, output text and exit
//! codes (checked against `icestormadmin` 3.7.8 by `tests/admin.rs`).
//!
//! Commands are separated by `;` or newlines; words by blanks; single or
//! double quotes keep blanks inside a word.
//!
//! `replica` prints what `icestormadmin` prints for each replica
//! (`id`, `coord`, `group name`, `state`, `group`, `max`) and, for a
//! floe-storm replica, its Raft `role` (and term), its `log` position (last
//! index, applied index, snapshot index) and, on the leader, the index
//! each follower holds (`follower:` lines).

use std::collections::BTreeMap;
use std::io::Write;

use floe::runtime::UserError;
use floe::runtime::{Communicator, Proxy};
use floe::wire::{Identity, ProxyData};

use crate::slice::floe_storm::ReplicaPrx;
use crate::slice::ice_storm::{FinderPrx, TopicManagerInternalPrx, TopicManagerPrx, TopicPrx};
use crate::slice::ice_storm_election::{NodePrx, NodeState};
use crate::types::{LinkExists, NoSuchLink, NoSuchTopic, TopicExists};

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

/// A failed call: an IceStorm user exception or a local error.
enum CallError {
    User(UserError),
    Local(String),
}

impl From<floe::runtime::Error> for CallError {
    fn from(e: floe::runtime::Error) -> Self {
        match e {
            floe::runtime::Error::UserException(e) => CallError::User(e),
            e => CallError::Local(e.to_string()),
        }
    }
}

fn topic_proxy(comm: &Communicator, data: Option<ProxyData>) -> Result<TopicPrx, CallError> {
    data.map(|d| TopicPrx::unchecked_cast(Proxy::from_data(comm, d)))
        .ok_or_else(|| CallError::Local("null topic proxy".into()))
}

/// What `icestormadmin` prints for an IceStorm user exception.
fn user_text(e: &UserError) -> String {
    if let Some(e) = e.downcast_ref::<NoSuchTopic>() {
        format!("couldn't find topic `{}'", e.name)
    } else if let Some(e) = e.downcast_ref::<TopicExists>() {
        format!("topic `{}' exists", e.name)
    } else if let Some(e) = e.downcast_ref::<LinkExists>() {
        format!("link `{}' already exists", e.name)
    } else if let Some(e) = e.downcast_ref::<NoSuchLink>() {
        format!("couldn't find link `{}'", e.name)
    } else {
        e.ice_id().to_string()
    }
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
        managers.insert(p.identity().category.to_string(), p);
    }
    let default = match props.get("IceStormAdmin.TopicManager.Default") {
        Some(text) if !text.is_empty() => {
            comm.string_to_proxy(&text).map_err(|e| unreachable(&e))?
        }
        _ => {
            let host = props.get("IceStormAdmin.Host").unwrap_or_default();
            let port = props.get("IceStormAdmin.Port").unwrap_or_default();
            let finder = FinderPrx::unchecked_cast(
                comm.string_to_proxy(&format!("IceStorm/Finder:tcp -h {host} -p {port} -t 3000"))
                    .map_err(|e| unreachable(&e))?,
            );
            let data = finder
                .get_topic_manager()
                .await
                .map_err(|e| unreachable(&e))?;
            // The Finder's manager is the current one only: icestormadmin
            // knows instance names from its TopicManager properties alone.
            data.map(|d| Proxy::from_data(comm, d))
                .ok_or_else(|| unreachable(&"null topic manager proxy"))?
        }
    };
    // Contact the default manager once, as icestormadmin does.
    TopicManagerPrx::unchecked_cast(default.clone())
        .retrieve_all()
        .await
        .map_err(|e| unreachable(&e))?;
    Ok((managers, default))
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
    fn topic_name(&mut self, text: &str) -> Option<(TopicManagerPrx, String)> {
        let (mgr, name) = match text.split_once('/') {
            Some((inst, name)) => (self.manager(Some(inst))?, name),
            None => (self.current.clone(), text),
        };
        Some((TopicManagerPrx::unchecked_cast(mgr), name.to_string()))
    }

    fn report(&mut self, e: CallError, warn: bool) {
        let text = match e {
            CallError::User(e) => user_text(&e),
            CallError::Local(s) => s,
        };
        if warn {
            let _ = writeln!(self.err, "warning: {text}");
        } else {
            self.error(&text);
        }
    }

    async fn retrieve(&mut self, text: &str) -> Result<TopicPrx, Option<CallError>> {
        let (mgr, name) = self.topic_name(text).ok_or(None)?;
        let data = mgr.retrieve(&name).await.map_err(|e| Some(e.into()))?;
        topic_proxy(&self.comm, data).map_err(Some)
    }

    async fn retrieve_all(&mut self, mgr: &Proxy) -> Result<Vec<(String, TopicPrx)>, CallError> {
        let topics = TopicManagerPrx::unchecked_cast(mgr.clone())
            .retrieve_all()
            .await?;
        topics
            .into_iter()
            .map(|(name, data)| Ok((name, topic_proxy(&self.comm, data)?)))
            .collect()
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
                    if let Err(e) = mgr.create(&name).await {
                        self.report(e.into(), false);
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
                            if let Err(e) = t.destroy().await {
                                self.report(e.into(), false);
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
                if let Err(e) = from.link(&Some(to.to_data()), cost).await {
                    self.report(e.into(), false);
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
                let to = Some(topics[1].to_data());
                if let Err(e) = topics[0].unlink(&to).await {
                    self.report(e.into(), false);
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
                if args.len() > 1 {
                    self.usage("replica", "at most one argument");
                    return true;
                }
                let Some(mgr) = self.manager(args.first().copied()) else {
                    return true;
                };
                if let Err(e) = self.replica(mgr).await {
                    self.report(e, false);
                }
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

    /// `replica`: every replica as `icestormadmin` prints it (from the
    /// replicas' `query`), and for floe-storm replicas their role, term and
    /// log position (from `status`).
    async fn replica(&mut self, mgr: Proxy) -> Result<(), CallError> {
        let node = TopicManagerInternalPrx::unchecked_cast(mgr)
            .get_replica_node()
            .await?;
        let Some(node) = node else {
            self.error("This topic is not replicated");
            return Ok(());
        };
        let nodes = NodePrx::unchecked_cast(Proxy::from_data(&self.comm, node))
            .nodes()
            .await?;
        let _ = writeln!(self.out, "replica count: {}", nodes.len());
        for info in nodes {
            let Some(data) = info.n else { continue };
            let proxy = Proxy::from_data(&self.comm, data);
            let id = info.id;
            match NodePrx::unchecked_cast(proxy.clone()).query().await {
                Ok(q) => {
                    let up: Vec<String> = q.up.iter().map(|g| g.id.to_string()).collect();
                    let state = match q.state {
                        NodeState::NodeStateInactive => "inactive",
                        NodeState::NodeStateElection => "election",
                        NodeState::NodeStateReorganization => "reorganization",
                        NodeState::NodeStateNormal => "normal",
                    };
                    for (label, value) in [
                        ("id:", q.id.to_string()),
                        ("coord:", q.coord.to_string()),
                        ("group name:", q.group),
                        ("state:", state.to_owned()),
                        ("group:", up.join(",")),
                        ("max:", q.max.to_string()),
                    ] {
                        let _ = writeln!(self.out, "{id}: {label:<12}{value}");
                    }
                }
                Err(e) => {
                    let _ = writeln!(self.out, "{id}: {}", e.ice_name());
                    continue;
                }
            }
            // A floe-storm replica also tells its Raft role and log.
            if let Ok(s) = ReplicaPrx::unchecked_cast(proxy).status().await {
                let lines = [
                    ("role:", format!("{} (term {})", s.role, s.term)),
                    (
                        "log:",
                        format!(
                            "last {}, applied {}, snapshot {}",
                            s.last_log_index, s.applied, s.snapshot
                        ),
                    ),
                ];
                for (label, value) in lines {
                    let _ = writeln!(self.out, "{id}: {label:<12}{value}");
                }
                for p in s.peers {
                    let _ = writeln!(
                        self.out,
                        "{id}: {:<12}replica {} holds {}",
                        "follower:", p.id, p.matched
                    );
                }
            }
        }
        Ok(())
    }

    async fn links(&mut self, topic: &TopicPrx) -> Result<Vec<(String, i32)>, CallError> {
        let infos = topic.get_link_info_seq().await?;
        Ok(infos.into_iter().map(|l| (l.name, l.cost)).collect())
    }

    async fn subscribers(&mut self, topic: &TopicPrx) -> Result<Vec<Identity>, CallError> {
        Ok(topic.get_subscribers().await?)
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
