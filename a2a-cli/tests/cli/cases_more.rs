//! Credentials, configuration, diagnostics, the tool's own surface, and the Tier 3 extras.

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::*;

pub(crate) fn cases() -> Vec<Case> {
    vec![
        case!(
            credentials_follow_the_card_schemes,
            ["A2ACLI_AUTH_001", "A2ACLI_AUTH_002"]
        ),
        case!(
            tls_verification_is_off_only_with_insecure_and_never_silently,
            ["A2ACLI_AUTH_003"]
        ),
        case!(
            debug_shows_the_exchange_with_credentials_redacted,
            ["A2ACLI_AUTH_004", "A2ACLI_OUT_007"]
        ),
        case!(
            configuration_precedence_and_sources,
            ["A2ACLI_CONFIG_002", "A2ACLI_CONFIG_001"]
        ),
        case!(help_version_and_defaults, ["A2ACLI_CLI_001"]),
        case!(completion_scripts, ["A2ACLI_CLI_002"]),
        case!(
            conformance_smoke_checks_a_live_agent,
            ["A2ACLI_CONFORM_001"]
        ),
        case!(push_receive_accepts_notifications, ["A2ACLI_PUSH_002"]),
        case!(
            extended_card_needs_a_declared_scheme,
            ["A2ACLI_CARD_GET_003", "A2ACLI_AUTH_008"]
        ),
        case!(required_extensions_are_declared, ["A2ACLI_VER_002"]),
        case!(mutual_tls_with_a_client_certificate, ["A2ACLI_AUTH_009"]),
        case!(
            chat_carries_context_and_task_across_turns,
            ["A2ACLI_CHAT_001", "A2ACLI_OUT_005"]
        ),
    ]
}

async fn credentials_follow_the_card_schemes(env: Arc<Env>) {
    for binding in BINDINGS {
        let out = jrun(
            &env.guarded,
            binding,
            &["--bearer", "tok-cli", "send", "hello"],
        )
        .await;
        assert_eq!(
            out.doc()["task"]["status"]["state"],
            "TASK_STATE_COMPLETED",
            "{binding}"
        );
        let mut c = command(
            &env.guarded,
            &["--transport", binding, "-o", "json", "send", "hello"],
        );
        c.env("A2ACLI_BEARER", "tok-cli");
        finish(c.spawn().unwrap()).await.ok();
        // A flag beats the environment.
        let mut c = command(
            &env.guarded,
            &[
                "--transport",
                binding,
                "-o",
                "json",
                "--bearer",
                "tok-cli",
                "send",
                "hello",
            ],
        );
        c.env("A2ACLI_BEARER", "wrong");
        finish(c.spawn().unwrap()).await.ok();
        // An API key, where the card's apiKey scheme puts it.
        let out = jrun(
            &env.keyed,
            binding,
            &["--api-key", "key-cli", "send", "hello"],
        )
        .await;
        assert_eq!(
            out.doc()["task"]["status"]["state"],
            "TASK_STATE_COMPLETED",
            "{binding}"
        );
        let mut c = command(
            &env.keyed,
            &["--transport", binding, "-o", "json", "send", "hello"],
        );
        c.env("A2ACLI_API_KEY", "key-cli");
        finish(c.spawn().unwrap()).await.ok();
        // A service parameter is a header or gRPC metadata, whatever its name.
        env.spy.lock().unwrap().clear();
        jrun(
            &env.url,
            binding,
            &[
                "--svc-param",
                &format!("{PROBE}:{binding} probe"),
                "--extension",
                HeaderSpy::URI,
                "send",
                "hello",
            ],
        )
        .await;
        assert!(
            env.spy
                .lock()
                .unwrap()
                .contains(&format!("{PROBE}={binding} probe")),
            "{binding}"
        );
    }
    // A bearer token is not sent to an agent that declares only an API key.
    let out = a2a(
        &env.keyed,
        &["-o", "json", "--bearer", "tok-cli", "send", "hello"],
    )
    .await;
    assert_eq!(out.code, 4, "{out:?}");
    assert!(out.stderr.contains("--bearer is not sent"), "{out:?}");
    let help = a2a(&env.url, &["--help"]).await.ok().stdout;
    assert!(
        help.contains("[env: A2ACLI_BEARER]") && help.contains("[env: A2ACLI_API_KEY]"),
        "{help}"
    );
    assert!(
        help.contains("process table") && help.contains("shell history"),
        "{help}"
    );
    let svc = help.split("--svc-param").nth(1).unwrap_or_default();
    assert!(
        !svc[..svc.find("\n  -").unwrap_or(svc.len())]
            .to_lowercase()
            .contains("auth"),
        "not documented as an authentication flag"
    );
}

async fn tls_verification_is_off_only_with_insecure_and_never_silently(env: Arc<Env>) {
    let url = env.mtls.clone();
    let dir = env.tmp.join("mtls");
    let path = |n: &str| dir.join(n).display().to_string();
    let (cert_path, key_path) = (path("client.pem"), path("client.key"));
    let identity = ["--cert", cert_path.as_str(), "--key", key_path.as_str()];
    // Verified by default: the test CA is unknown, the agent unreachable.
    let mut args = vec!["-o", "json"];
    args.extend(identity);
    args.extend(["card", "get"]);
    let out = a2a(&url, &args).await;
    assert_eq!(out.code, 3, "{out:?}");
    assert!(!out.stderr.contains("WARNING"), "{out:?}");
    // --insecure: the call goes through, with a warning on stderr.
    for binding in ["jsonrpc", "http+json"] {
        let mut args = vec!["--insecure", "--transport", binding, "-o", "json"];
        args.extend(identity);
        args.extend(["send", "hello"]);
        let out = a2a(&url, &args).await;
        assert_eq!(out.code, 0, "{binding}: {out:?}");
        assert!(
            out.stderr
                .contains("WARNING: TLS certificate verification is off"),
            "{binding}: {out:?}"
        );
        assert!(!out.stderr.contains("credentials"), "{out:?}");
    }
    // A credential sent that way gets a warning of its own.
    let mut args = vec!["-k", "--bearer", "t0ken", "-o", "json"];
    args.extend(identity);
    args.extend(["card", "get"]);
    let out = a2a(&url, &args).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("WARNING: credentials (--bearer / --api-key) would go"),
        "{out:?}"
    );
}

async fn debug_shows_the_exchange_with_credentials_redacted(env: Arc<Env>) {
    for binding in BINDINGS {
        let out = a2a(
            &env.guarded,
            &[
                "--transport",
                binding,
                "--debug",
                "--verbose",
                "--bearer",
                "tok-cli",
                "--svc-param",
                "x-secret-header:hush-hush",
                "send",
                "hello",
            ],
        )
        .await
        .ok();
        for secret in ["tok-cli", "hush-hush"] {
            assert!(
                !out.stderr.contains(secret) && !out.stdout.contains(secret),
                "{binding}: {secret} leaked: {out:?}"
            );
        }
        assert!(out.stderr.contains("authorization: <redacted>"), "{out:?}");
        assert!(
            out.stderr.contains("a2a: debug: send message {"),
            "the message sent: {out:?}"
        );
        assert!(
            out.stderr.contains("a2a: debug: event {")
                || out.stderr.contains("a2a: debug: answer {"),
            "{out:?}"
        );
        assert!(out.stderr.contains("a2a: debug: transport "), "{out:?}");
    }
    let mut c = command(&env.keyed, &["--debug", "send", "hello"]);
    c.env("A2ACLI_API_KEY", "key-cli");
    let out = finish(c.spawn().unwrap()).await.ok();
    assert!(!out.stderr.contains("key-cli"), "{out:?}");
}

async fn configuration_precedence_and_sources(env: Arc<Env>) {
    let root = env.tmp.join("config-precedence");
    let global = root.join("xdg/a2a-cli");
    let work = root.join("work/sub");
    std::fs::create_dir_all(&global).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        global.join(".env"),
        "A2ACLI_POLL_INTERVAL=7s\nA2ACLI_TIMEOUT=9m\nA2ACLI_OUTPUT=json\n",
    )
    .unwrap();
    std::fs::write(
        root.join("work/.env"),
        format!("A2ACLI_TIMEOUT=8m\nA2ACLI_AGENT_CARD={}\n", env.url),
    )
    .unwrap();
    let agent_file = root.join("agent.env");
    std::fs::write(&agent_file, "A2ACLI_TIMEOUT=6m\n").unwrap();
    let run = |args: Vec<String>, envs: Vec<(&'static str, String)>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_a2a"));
        c.args(&args)
            .env("XDG_CONFIG_HOME", root.join("xdg"))
            .env_remove("A2ACLI_CONFIG")
            .current_dir(&work)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, _) in std::env::vars() {
            if k.starts_with("A2ACLI_") {
                c.env_remove(k);
            }
        }
        for (k, v) in envs {
            c.env(k, v);
        }
        async move { finish(c.spawn().unwrap()).await.ok() }
    };
    let shown = |out: &Out| -> Value { out.doc()["settings"].clone() };
    // Files only: local over global, global over the default.
    let s = shown(&run(vec!["config".into(), "show".into()], vec![]).await);
    assert_eq!(s["A2ACLI_TIMEOUT"]["value"], "8m");
    assert!(
        s["A2ACLI_TIMEOUT"]["source"]
            .as_str()
            .unwrap()
            .ends_with("work/.env"),
        "{s}"
    );
    assert_eq!(s["A2ACLI_POLL_INTERVAL"]["value"], "7s");
    assert!(
        s["A2ACLI_POLL_INTERVAL"]["source"]
            .as_str()
            .unwrap()
            .contains("xdg/a2a-cli/.env"),
        "{s}"
    );
    assert_eq!(s["A2ACLI_REQUEST_TIMEOUT"]["source"], "default");
    // The environment over the files; a flag over the environment.
    let s = shown(
        &run(
            vec!["config".into(), "show".into()],
            vec![("A2ACLI_TIMEOUT", "5m".into())],
        )
        .await,
    );
    assert_eq!(
        (
            s["A2ACLI_TIMEOUT"]["value"].as_str(),
            s["A2ACLI_TIMEOUT"]["source"].as_str()
        ),
        (Some("5m"), Some("environment A2ACLI_TIMEOUT"))
    );
    let s = shown(
        &run(
            vec![
                "--timeout".into(),
                "4m".into(),
                "config".into(),
                "show".into(),
            ],
            vec![("A2ACLI_TIMEOUT", "5m".into())],
        )
        .await,
    );
    assert_eq!(
        (
            s["A2ACLI_TIMEOUT"]["value"].as_str(),
            s["A2ACLI_TIMEOUT"]["source"].as_str()
        ),
        (Some("4m"), Some("flag --timeout"))
    );
    // Scoped by agent: --config names the agent's file in place of the local one.
    let s = shown(
        &run(
            vec![
                "--config".into(),
                agent_file.display().to_string(),
                "config".into(),
                "show".into(),
            ],
            vec![],
        )
        .await,
    );
    assert_eq!(s["A2ACLI_TIMEOUT"]["value"], "6m", "{s}");
    // The configured agent and output apply to real calls.
    let out = run(vec!["send".into(), "hello".into()], vec![]).await;
    assert_eq!(out.doc()["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    // --stream is never read from a file or the environment.
    std::fs::write(
        root.join("work/.env"),
        format!("A2ACLI_STREAM=true\nA2ACLI_AGENT_CARD={}\n", env.url),
    )
    .unwrap();
    let out = run(
        vec!["send".into(), "stream a b".into()],
        vec![("A2ACLI_STREAM", "true".into())],
    )
    .await;
    assert_eq!(out.json().len(), 1, "one document: {out:?}");
}

async fn help_version_and_defaults(env: Arc<Env>) {
    for args in [
        &["help"][..],
        &["--help"],
        &["-h"],
        &["help", "send"],
        &["send", "--help"],
        &["task", "get", "--help"],
    ] {
        let out = a2a(&env.url, args).await.ok();
        assert!(out.stdout.contains("Usage:"), "{args:?}: {out:?}");
    }
    let help = a2a(&env.url, &["send", "--help"]).await.ok().stdout;
    for default in [
        "[default: text]",
        "[default: 1.0]",
        "[default: 2s]",
        "[default: http://127.0.0.1:8080]",
    ] {
        assert!(help.contains(default), "{default} in\n{help}");
    }
    for flag in ["-v", "--version"] {
        let out = a2a(&env.url, &[flag]).await.ok();
        assert_eq!(
            out.stdout.trim(),
            format!("a2a {}", env!("CARGO_PKG_VERSION"))
        );
    }
}

async fn completion_scripts(env: Arc<Env>) {
    for shell in ["bash", "zsh", "fish"] {
        let out = a2a(&env.url, &["completion", shell]).await.ok();
        assert!(
            out.stdout.contains("push-config") && out.stdout.contains("agent-card"),
            "{shell}"
        );
    }
    let out = a2a(&env.url, &["-o", "json", "completion", "tcsh"]).await;
    assert_eq!(out.code, 2, "{out:?}");
}

async fn conformance_smoke_checks_a_live_agent(env: Arc<Env>) {
    for binding in BINDINGS {
        let out = jrun(&env.url, binding, &["conformance"]).await;
        let report = out.doc();
        assert_eq!(report["failed"], 0, "{binding}: {report}");
        let names: Vec<&str> = report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["check"].as_str())
            .collect();
        assert_eq!(
            names,
            [
                "card",
                "interface",
                "send",
                "get",
                "task-not-found",
                "list",
                "stream"
            ]
        );
    }
    // A card that lacks required fields fails the check, and the run.
    let bad = env
        .card_file("conformance-bad.json", |c| c["name"] = "".into())
        .await;
    let out = a2a(&bad, &["conformance"]).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stdout.contains("Check: card fail"), "{out:?}");
}

async fn push_receive_accepts_notifications(env: Arc<Env>) {
    let mut receiver = Command::new(env!("CARGO_BIN_EXE_a2a"))
        .args([
            "-o", "json", "push", "receive", "--count", "2", "--token", "tok-push",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let line = stderr_line(&mut receiver, "listening for push notifications on").await;
    let url = line.rsplit(' ').next().unwrap().to_owned();
    // A notification without the token is refused.
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let mut raw = tokio::net::TcpStream::connect(&addr).await.unwrap();
    raw.write_all(b"POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}")
        .await
        .unwrap();
    let mut answer = String::new();
    raw.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    // The agent's notifications of a task are accepted and printed.
    let id = jrun(&env.url, "jsonrpc", &["send", "--async", "gated push"])
        .await
        .doc()["task"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    jrun(
        &env.url,
        "jsonrpc",
        &[
            "task",
            "push-config",
            "set",
            &id,
            &url,
            "--token",
            "tok-push",
        ],
    )
    .await;
    env.open("push");
    let out = finish(receiver).await.ok();
    let events = out.json();
    assert_eq!(events.len(), 2, "{out:?}");
    assert!(
        events.iter().all(|e| e.to_string().contains(&id)),
        "{out:?}"
    );
}

/// A card server that records the headers of each card request.
async fn recording_card_server(card: Value) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    let body = card.to_string();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match socket.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            seen.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&head).to_lowercase());
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(reply.as_bytes()).await;
            let _ = socket.shutdown().await;
        }
    });
    (url, heads)
}

async fn extended_card_needs_a_declared_scheme(env: Arc<Env>) {
    for binding in BINDINGS {
        let out = jrun(
            &env.strict,
            binding,
            &[
                "--bearer",
                "tok-cli",
                "--extension",
                Signed::URI,
                "card",
                "get",
                "--extended",
            ],
        )
        .await;
        assert_eq!(out.doc()["name"], "the extended card", "{binding}");
        let out = a2a(
            &env.strict,
            &[
                "--transport",
                binding,
                "-o",
                "json",
                "--extension",
                Signed::URI,
                "card",
                "get",
                "--extended",
            ],
        )
        .await;
        assert_eq!(out.code, 4, "no credential: {out:?}");
    }
    // The public card is fetched without any credential, even when one is given.
    let card = reqwest_card(&env.strict).await;
    let (url, heads) = recording_card_server(card).await;
    a2a(
        &url,
        &["--bearer", "tok-cli", "--api-key", "k", "card", "get"],
    )
    .await
    .ok();
    let heads = heads.lock().unwrap().clone();
    assert_eq!(heads.len(), 1);
    assert!(
        !heads[0].contains("authorization")
            && !heads[0].contains("x-api-key")
            && !heads[0].contains("tok-cli"),
        "{heads:?}"
    );
}

async fn required_extensions_are_declared(env: Arc<Env>) {
    for binding in BINDINGS {
        let out = a2a(
            &env.strict,
            &[
                "--transport",
                binding,
                "-o",
                "json",
                "--bearer",
                "tok-cli",
                "send",
                "hello",
            ],
        )
        .await;
        assert_eq!(
            (out.code, out.error_code().as_str()),
            (1, "ExtensionSupportRequiredError"),
            "{binding}: {out:?}"
        );
        assert!(
            out.doc()["error"]["hint"]
                .as_str()
                .unwrap()
                .contains(Signed::URI),
            "{out:?}"
        );
        let out = jrun(
            &env.strict,
            binding,
            &[
                "--bearer",
                "tok-cli",
                "--extension",
                Signed::URI,
                "send",
                "hello",
            ],
        )
        .await;
        assert_eq!(out.doc()["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    }
    let out = a2a(&env.strict, &["card", "get"]).await.ok();
    assert!(
        out.stdout
            .contains(&format!("Extension: {} (required)", Signed::URI)),
        "{out:?}"
    );
}

/// A CA and certificates it issues (server: for 127.0.0.1; client: for client authentication).
fn pki() -> (String, (String, String), (String, String)) {
    let issue =
        |ca: &rcgen::CertifiedIssuer<'static, rcgen::KeyPair>, sans: Vec<String>, purpose| {
            let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
            let mut params = rcgen::CertificateParams::new(sans).unwrap();
            params.extended_key_usages = vec![purpose];
            let cert = params.signed_by(&key, ca).unwrap();
            (cert.pem(), key.serialize_pem())
        };
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = rcgen::CertifiedIssuer::self_signed(params, key).unwrap();
    let server = issue(
        &ca,
        vec!["127.0.0.1".into(), "localhost".into()],
        rcgen::ExtendedKeyUsagePurpose::ServerAuth,
    );
    let client = issue(&ca, vec![], rcgen::ExtendedKeyUsagePurpose::ClientAuth);
    (ca.pem(), server, client)
}

/// Starts an agent that requires a client certificate; writes the CA and the client's
/// certificate and key into `dir`. Called from `env()` (the server's start is not `Send`).
pub(crate) async fn mtls_agent(dir: &std::path::Path) -> RunningServer {
    use a2a_runtime::server::{ClientAuth, TlsConfig};
    let (ca, (server_cert, server_key), (client_cert, client_key)) = pki();
    std::fs::create_dir_all(dir).unwrap();
    for (name, pem) in [
        ("ca.pem", &ca),
        ("client.pem", &client_cert),
        ("client.key", &client_key),
    ] {
        std::fs::write(dir.join(name), pem).unwrap();
    }
    A2aServer::builder()
        .card(demo_card())
        .executor(CliAgent::default())
        .linked_extensions(false)
        .workers(1)
        .tls(TlsConfig::new(server_cert, server_key).client_ca(ca, ClientAuth::Required))
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap()
}

async fn mutual_tls_with_a_client_certificate(env: Arc<Env>) {
    let url = env.mtls.clone();
    assert!(url.starts_with("https://"), "{url}");
    let dir = env.tmp.join("mtls");
    let path = |n: &str| dir.join(n).display().to_string();
    let (ca_path, cert_path, key_path) = (path("ca.pem"), path("client.pem"), path("client.key"));
    // Not trusted: the system's roots do not know this CA.
    let out = a2a(&url, &["-o", "json", "card", "get"]).await;
    assert_eq!(
        (out.code, out.error_code().as_str()),
        (3, "A2ACLI_ERR_UNREACHABLE"),
        "{out:?}"
    );
    // Trusted, but no client certificate: the handshake is refused.
    let out = a2a(&url, &["-o", "json", "--ca-cert", &ca_path, "card", "get"]).await;
    assert_eq!(out.code, 3, "{out:?}");
    for binding in ["jsonrpc", "http+json"] {
        let out = jrun(
            &url,
            binding,
            &[
                "--ca-cert",
                &ca_path,
                "--cert",
                &cert_path,
                "--key",
                &key_path,
                "send",
                "hello",
            ],
        )
        .await;
        assert_eq!(
            out.doc()["task"]["status"]["state"],
            "TASK_STATE_COMPLETED",
            "{binding}"
        );
    }
    let out = a2a(&url, &["-o", "json", "--cert", &cert_path, "send", "hello"]).await;
    assert_eq!(out.code, 2, "--cert needs --key: {out:?}");
}

async fn chat_carries_context_and_task_across_turns(env: Arc<Env>) {
    for binding in BINDINGS {
        let mut child = command(&env.url, &["--transport", binding, "-o", "json", "chat"])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        {
            let mut stdin = child.stdin.take().unwrap();
            stdin
                .write_all(b"ask\nAda\n\nhello\n/quit\nnever sent\n")
                .await
                .unwrap();
        }
        let out = finish(child).await.ok();
        let turns = out.json();
        assert_eq!(turns.len(), 3, "{out:?}");
        let (first, second, third) = (&turns[0]["task"], &turns[1]["task"], &turns[2]["task"]);
        assert_eq!(
            first["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
            "{binding}"
        );
        assert_eq!(second["id"], first["id"], "the waiting task continues");
        assert_eq!(second["status"]["state"], "TASK_STATE_COMPLETED");
        assert_ne!(third["id"], first["id"], "a finished task is not continued");
        assert_eq!(
            third["contextId"], first["contextId"],
            "the context is carried"
        );
        assert!(
            !out.stderr.contains("you>"),
            "no prompt off a terminal: {out:?}"
        );
    }
    // Text: each turn in the `Label: value` form, a blank line between turns.
    let mut child = command(&env.url, &["chat"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"hello\nhello\n")
        .await
        .unwrap();
    let out = finish(child).await.ok();
    assert_eq!(
        out.stdout.matches("State: TASK_STATE_COMPLETED").count(),
        2,
        "{out:?}"
    );
}
