//! Configuration (SPEC.md §6.4): `.env` files with `A2ACLI_<OPTION>=value` lines, a global one
//! (`~/.config/a2a-cli/.env`) and a local one (the nearest `.env` up from the working directory,
//! or the file given by `--config`). Their values become the options' defaults, so the order is
//! flag > environment > local file > global file > built-in default. Only configuration is
//! read: the CLI never writes a file and never stores a task or context id.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::ArgMatches;
use clap::parser::ValueSource;

use crate::failure::Failure;

/// A setting a file may hold: its variable, the option's id, whether it is a credential.
pub(crate) struct Setting {
    pub(crate) var: &'static str,
    pub(crate) id: &'static str,
    pub(crate) flag: &'static str,
    pub(crate) secret: bool,
}

/// The global options a configuration file may set.
pub(crate) const SETTINGS: &[Setting] = &[
    Setting::new("A2ACLI_AGENT_CARD", "agent_card", "--agent-card", false),
    Setting::new("A2ACLI_TRANSPORT", "transports", "--transport", false),
    Setting::new("A2ACLI_OUTPUT", "output", "--output", false),
    Setting::new("A2ACLI_BEARER", "bearer", "--bearer", true),
    Setting::new("A2ACLI_API_KEY", "api_key", "--api-key", true),
    Setting::new("A2ACLI_A2A_VERSION", "a2a_version", "--a2a-version", false),
    Setting::new("A2ACLI_TIMEOUT", "timeout", "--timeout", false),
    Setting::new(
        "A2ACLI_POLL_INTERVAL",
        "poll_interval",
        "--poll-interval",
        false,
    ),
    Setting::new(
        "A2ACLI_REQUEST_TIMEOUT",
        "request_timeout",
        "--request-timeout",
        false,
    ),
    Setting::new("A2ACLI_CA_CERT", "ca_cert", "--ca-cert", false),
    Setting::new("A2ACLI_INSECURE", "insecure", "--insecure", false),
    Setting::new("A2ACLI_CERT", "cert", "--cert", false),
    Setting::new("A2ACLI_KEY", "key", "--key", false),
    Setting::new("A2ACLI_CARD_KEY", "card_key", "--card-key", false),
    Setting::new("A2ACLI_DEBUG", "debug", "--debug", false),
    Setting::new("A2ACLI_VERBOSE", "verbose", "--verbose", false),
];

impl Setting {
    const fn new(var: &'static str, id: &'static str, flag: &'static str, secret: bool) -> Self {
        Self {
            var,
            id,
            flag,
            secret,
        }
    }
}

/// The values read from the configuration files, each with the file it came from.
#[derive(Debug, Default)]
pub(crate) struct FileValues {
    values: BTreeMap<&'static str, (String, PathBuf)>,
    /// The files read, in the order applied (global, then local).
    pub(crate) files: Vec<PathBuf>,
}

impl FileValues {
    /// Reads the global file, then the local one (`--config` or the nearest `.env`); a later
    /// file overrides an earlier one. A file that holds a credential must be mode 0600.
    pub(crate) fn load(args: &[OsString]) -> Result<Self, Failure> {
        let mut found = Self::default();
        if let Some(global) = global_file()
            && global.is_file()
        {
            found.read(&global)?;
        }
        match explicit_config(args) {
            Some(path) => {
                if !path.is_file() {
                    return Err(Failure::usage(format!(
                        "--config {}: no such file",
                        path.display()
                    )));
                }
                found.read(&path)?;
            }
            None => {
                if let Some(local) = local_file() {
                    found.read(&local)?;
                }
            }
        }
        Ok(found)
    }

    fn read(&mut self, path: &Path) -> Result<(), Failure> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Failure::usage(format!(
                "could not read the config file {}: {e}",
                path.display()
            ))
        })?;
        let mut holds_secret = false;
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let line = line.strip_prefix("export ").unwrap_or(line);
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            let key = key.trim();
            let Some(setting) = SETTINGS.iter().find(|s| s.var == key) else {
                continue;
            };
            let value = unquote(value.trim());
            holds_secret |= setting.secret;
            self.values
                .insert(setting.var, (value.to_owned(), path.to_owned()));
        }
        if holds_secret {
            check_private(path)?;
        }
        self.files.push(path.to_owned());
        Ok(())
    }

    /// Makes the files' values the defaults of the options they name.
    pub(crate) fn apply(&self, mut cmd: clap::Command) -> clap::Command {
        for setting in SETTINGS {
            let Some((value, _)) = self.values.get(setting.var) else {
                continue;
            };
            // Defaults live as long as the process (one parse per run).
            let values: Vec<&'static str> = if setting.id == "transports" {
                value
                    .split(',')
                    .map(|v| &*Box::leak(v.trim().to_owned().into_boxed_str()))
                    .collect()
            } else {
                vec![&*Box::leak(value.clone().into_boxed_str())]
            };
            cmd = cmd.mut_arg(setting.id, |a| a.default_values(values));
        }
        cmd
    }

    /// Where a setting's effective value came from.
    pub(crate) fn source(&self, matches: &ArgMatches, setting: &Setting) -> String {
        match matches.value_source(setting.id) {
            Some(ValueSource::CommandLine) => format!("flag {}", setting.flag),
            Some(ValueSource::EnvVariable) => format!("environment {}", setting.var),
            _ => match self.values.get(setting.var) {
                Some((_, path)) => format!("file {}", path.display()),
                None => "default".into(),
            },
        }
    }
}

fn unquote(v: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = v.strip_prefix(q).and_then(|v| v.strip_suffix(q)) {
            return inner;
        }
    }
    v
}

/// `~/.config/a2a-cli/.env` (or under `$XDG_CONFIG_HOME`).
pub(crate) fn global_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("a2a-cli").join(".env"))
}

/// The nearest `.env` walking up from the working directory.
fn local_file() -> Option<PathBuf> {
    let mut dir = std::env::current_dir().ok()?;
    loop {
        let candidate = dir.join(".env");
        if candidate.is_file() {
            return Some(candidate);
        }
        if !dir.pop() {
            return None;
        }
    }
}

/// `--config PATH` (or `--config=PATH`) on the command line, else `A2ACLI_CONFIG`.
fn explicit_config(args: &[OsString]) -> Option<PathBuf> {
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let text = arg.to_string_lossy();
        if text == "--" {
            break;
        }
        if text == "--config" {
            return iter.next().map(PathBuf::from);
        }
        if let Some(path) = text.strip_prefix("--config=") {
            return Some(PathBuf::from(path));
        }
    }
    std::env::var_os("A2ACLI_CONFIG")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

#[cfg(unix)]
fn check_private(path: &Path) -> Result<(), Failure> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(path)
        .map_err(|e| Failure::usage(format!("{}: {e}", path.display())))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(Failure::usage(format!(
            "{} holds a credential but other users may read it (mode {:o})",
            path.display(),
            mode & 0o777
        ))
        .hint(format!("chmod 600 {}", path.display())));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_: &Path) -> Result<(), Failure> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_config_flags_are_read() {
        assert_eq!(unquote("\"a b\""), "a b");
        assert_eq!(unquote("'x'"), "x");
        assert_eq!(unquote("plain"), "plain");
        let args: Vec<OsString> = ["a2a", "--config", "/tmp/x.env", "card", "get"]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(explicit_config(&args), Some(PathBuf::from("/tmp/x.env")));
        let args: Vec<OsString> = ["a2a", "--config=/tmp/y.env"]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(explicit_config(&args), Some(PathBuf::from("/tmp/y.env")));
    }
}
