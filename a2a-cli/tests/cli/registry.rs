//! The requirement registry of the A2A CLI specification v0.2 (COMPLIANCE.md, revised
//! 2026-08-17): each identifier's tier, section and short text, and, for a requirement no case
//! exercises (or one a passing case cannot fully show), the status it gets and why.

/// One requirement.
pub(crate) struct Requirement {
    pub(crate) id: &'static str,
    pub(crate) tier: u8,
    pub(crate) spec: &'static str,
    pub(crate) text: &'static str,
}

const fn r(id: &'static str, tier: u8, spec: &'static str, text: &'static str) -> Requirement {
    Requirement {
        id,
        tier,
        spec,
        text,
    }
}

pub(crate) const REQUIREMENTS: &[Requirement] = &[
    r(
        "A2ACLI_CARD_GET_001",
        1,
        "§8.1, §11",
        "card get — resolve/parse an Agent Card from host, URL, or file:// path; select a transport",
    ),
    r(
        "A2ACLI_SEND_001",
        1,
        "§8.2",
        "Send a message to start an interaction",
    ),
    r(
        "A2ACLI_SEND_002",
        1,
        "§8.2, §4.5",
        "Blocking by default; --async returns identifiers immediately (--return-immediately / --no-wait are OPTIONAL aliases)",
    ),
    r(
        "A2ACLI_SEND_003",
        1,
        "§8.2, §7.2",
        "--stream consumes SSE when supported, never hangs when unsupported; a Message-only response exits cleanly",
    ),
    r(
        "A2ACLI_SEND_004",
        1,
        "§8.2",
        "Renders produced artifacts; never silently discards a part",
    ),
    r(
        "A2ACLI_SEND_005",
        1,
        "§8.2",
        "Caller can set a part's media type with --media-type, bound to the part flag it follows; inferred only when none given",
    ),
    r(
        "A2ACLI_SEND_006",
        1,
        "§8.2",
        "--text / --file / --data repeatable and order-preserving; --data - reads stdin",
    ),
    r(
        "A2ACLI_TASK_GET_001",
        1,
        "§8.3",
        "task get — state, artifacts, history by id; renders artifacts, never silently strips them",
    ),
    r(
        "A2ACLI_TASK_CANCEL_001",
        1,
        "§8.4",
        "task cancel — idempotent; reports resulting state",
    ),
    r(
        "A2ACLI_INTERACT_001",
        1,
        "§6.2",
        "Continue an interaction via --context-id",
    ),
    r(
        "A2ACLI_INTERACT_002",
        1,
        "§6.2",
        "--task-id with or without --context-id (server resolves context); when both given they MUST correspond; a rejected id fails non-zero, creates no new task, surfaces the protocol error",
    ),
    r(
        "A2ACLI_INTERACT_003",
        1,
        "§6.1, §2",
        "Never invents server-assigned identifiers; never assumes contextId denotes a chat session",
    ),
    r(
        "A2ACLI_INTERACT_004",
        1,
        "§6.3",
        "Reports taskId/contextId/state on completion and interruption, copy-pasteable, with an exact resume command",
    ),
    r(
        "A2ACLI_INTERACT_005",
        1,
        "§4.3, §6.1, §6.4",
        "Stateless: no stored last taskId/contextId replay; no --continue; state never only in process memory",
    ),
    r(
        "A2ACLI_TASK_POLL_001",
        1,
        "§7.3",
        "Polling path available — one-shot task get, plus task get --wait to a terminal or interrupted state",
    ),
    r(
        "A2ACLI_TASK_POLL_002",
        1,
        "§7.3",
        "--poll-interval / --timeout honored; bounded backoff; no busy-loop; interruptible without losing printed taskId",
    ),
    r(
        "A2ACLI_TASK_POLL_003",
        1,
        "§7.1, §7.3",
        "Stops immediately on interrupted states (INPUT_REQUIRED / AUTH_REQUIRED); TASK_STATE_UNSPECIFIED is neither, so polling continues under --timeout",
    ),
    r(
        "A2ACLI_TASK_POLL_004",
        1,
        "§7.3",
        "When a wait prefers streaming, falls back to polling on stream failure and drives to terminal/interrupted",
    ),
    r(
        "A2ACLI_OUT_001",
        1,
        "§9.1, §9.5, §6.3",
        "Standard output names context/task/state in every mode; payload to stdout, diagnostics to stderr, never mixed",
    ),
    r(
        "A2ACLI_OUT_002",
        1,
        "§9.3, App. B",
        "-o json (no --stream): exactly one terminal protocol document, never an event log, never implicit JSONL",
    ),
    r(
        "A2ACLI_OUT_003",
        1,
        "§9.3, §9.4, App. B",
        "-o json --stream: JSONL one object per line, final line terminal; a stream-terminating error is a final error line",
    ),
    r(
        "A2ACLI_OUT_004",
        1,
        "§9.4, App. B, App. E",
        "Errors machine-readable, consistent across transports; protocol error name vs A2ACLI_ERR_* code; no invented codes; hint field",
    ),
    r(
        "A2ACLI_OUT_005",
        1,
        "§9.2, §4.1",
        "text floor: one Label: value per line, stable labels, no control sequences; block content under its own Label: line, blank-line terminated, never interleaved; interactive auto-degrades to text off-TTY",
    ),
    r(
        "A2ACLI_OUT_006",
        1,
        "§9.5",
        "When not waiting (--async), still emits a result object carrying at least taskId and contextId",
    ),
    r(
        "A2ACLI_EXIT_001",
        1,
        "§9.6, App. E",
        "Implements exit statuses 0/1/2; any reserved status carries its documented meaning and agrees with the reported error",
    ),
    r(
        "A2ACLI_EXIT_002",
        1,
        "§4.6, §9.6",
        "Execution decoupled from outcome: exits 0 on a reported turn even when the task is FAILED/REJECTED or paused at INPUT_REQUIRED/AUTH_REQUIRED; outcome carried in task state",
    ),
    r(
        "A2ACLI_AUTH_001",
        1,
        "§10.1",
        "Scriptable credentials — bearer, API key, env equivalents attached per the agent's declared security scheme; --svc-param separate, never an auth flag",
    ),
    r(
        "A2ACLI_AUTH_002",
        1,
        "§10.1, §4.5",
        "Offers an env-var equivalent for each credential flag; documents process-table and shell-history exposure of a flag-supplied credential; does not alter flag > env precedence",
    ),
    r(
        "A2ACLI_AUTH_003",
        1,
        "§10.1, §4.5",
        "Emits a prominent stderr security warning when a credential is sent with certificate verification disabled (--insecure); never disables TLS verification silently",
    ),
    r(
        "A2ACLI_AUTH_004",
        1,
        "§10.1, §5.2",
        "Redacts credential material from diagnostic output including --debug raw-wire logging; not defeasible by a verbosity flag",
    ),
    r(
        "A2ACLI_TX_001",
        1,
        "§11.1",
        "Transport selected from the Agent Card, honoring declared preference order",
    ),
    r(
        "A2ACLI_TX_002",
        1,
        "§11.1, §4.5",
        "Uses first supportedInterfaces entry it supports absent a client preference; --transport repeatable and ordered",
    ),
    r(
        "A2ACLI_TX_003",
        1,
        "§11.1",
        "Sets the selected AgentInterface tenant in every request message exactly as declared; omits it when none declared (na if none declared)",
    ),
    r(
        "A2ACLI_VER_001",
        1,
        "§11.2",
        "A2A-Version signaled explicitly on every request (never empty, which A2A reads as 0.3); down only within 1.x, never below 1.0; no silent downgrade",
    ),
    r(
        "A2ACLI_DEFAULT_001",
        1,
        "§4.5",
        "Ships baseline defaults, each overridable by an explicit flag; exposes effective defaults (see default_001_breakdown)",
    ),
    r(
        "A2ACLI_CONFIG_001",
        1,
        "§6.4",
        "Persisted config (if any): conventional path, secrets 0600, inspectable via read-only config show, user-editable; never records session state to resume",
    ),
    r(
        "A2ACLI_CLI_001",
        1,
        "§5.1, §5.2, §4.5",
        "help and <command> --help print usage and exit; -v/--version prints the tool version; --help shows the effective defaults",
    ),
    r(
        "A2ACLI_SKILL_001",
        1,
        "§12.1, §12.2",
        "Conditional (na if no skill): ships exactly one Agent Skill, generic and token-efficient, deferring to runtime help",
    ),
    r(
        "A2ACLI_SKILL_002",
        1,
        "§12.3",
        "Conditional (na if no skill): skill and specification kept as distinct layers; skill does not restate normative reqs",
    ),
    r(
        "A2ACLI_CARD_GET_002",
        2,
        "§8.1",
        "card get --validate — validate the Agent Card against the A2A schema",
    ),
    r(
        "A2ACLI_TASK_LIST_001",
        2,
        "§5.1, App. A",
        "task list — cursor-paginated, filterable by status and context",
    ),
    r(
        "A2ACLI_TASK_SUBSCRIBE_001",
        2,
        "§5.1, §7.2",
        "task subscribe — (re)subscribe to a task's event stream",
    ),
    r(
        "A2ACLI_TASK_SUBSCRIBE_002",
        2,
        "§7.4, §7.2",
        "Stream resumption after disconnect; first event re-delivers the full Task, so no separate get is required",
    ),
    r(
        "A2ACLI_AUTH_005",
        2,
        "§10.2",
        "auth login — OAuth 2.1 device-code flow",
    ),
    r(
        "A2ACLI_AUTH_006",
        2,
        "§10.2",
        "auth login — OAuth 2.1 client-credentials flow",
    ),
    r(
        "A2ACLI_AUTH_007",
        2,
        "§10.2",
        "Secure token storage with automatic attachment on later calls",
    ),
    r(
        "A2ACLI_TX_004",
        2,
        "§11.1",
        "At least two transports supported and selectable",
    ),
    r(
        "A2ACLI_VER_003",
        2,
        "§11.3",
        "Verifies a capability on the Agent Card before invoking a capability-gated operation",
    ),
    r(
        "A2ACLI_CONFIG_002",
        2,
        "§6.4",
        "Configuration precedence (flag > env > local > global > built-in), scopeable by agent-card reference; config show reports each value and its source",
    ),
    r(
        "A2ACLI_DOWNLOAD_001",
        2,
        "§5.1",
        "task download — save task artifacts to disk",
    ),
    r(
        "A2ACLI_OUT_007",
        2,
        "§5.2",
        "--debug enables diagnostic logging to stderr, including the raw protocol messages exchanged on the wire",
    ),
    r(
        "A2ACLI_CONFORM_001",
        2,
        "§5.1",
        "conformance — smoke-check a live agent against the A2A TCK",
    ),
    r(
        "A2ACLI_CLI_002",
        2,
        "§5.1",
        "completion <shell> — emits a shell completion script for the named shell",
    ),
    r(
        "A2ACLI_PUSH_001",
        2,
        "§5.1, App. A",
        "task push-config create / get / list / delete",
    ),
    r(
        "A2ACLI_CARD_GET_003",
        3,
        "§8.1, §10.4",
        "Authenticated extended Agent Card, fetched only via a security scheme advertised on the public card",
    ),
    r(
        "A2ACLI_CARD_GET_004",
        3,
        "§8.1",
        "Agent Card signature verification per A2A 8.4.3 — verify when present, report verified/unverifiable/absent; never present an unverified card as verified",
    ),
    r(
        "A2ACLI_CARD_GET_005",
        3,
        "§8.1",
        "Catalog / registry resolution — accept a catalog entry wherever --agent-card takes a reference; resolve it to a card first",
    ),
    r(
        "A2ACLI_PUSH_002",
        3,
        "§7.2",
        "Local webhook receiver able to accept push notifications",
    ),
    r(
        "A2ACLI_CHAT_001",
        3,
        "§6.2, §5.1",
        "Interactive chat carrying context and task across turns",
    ),
    r("A2ACLI_TX_005", 3, "§11.1", "gRPC transport"),
    r(
        "A2ACLI_AUTH_008",
        3,
        "§10.4",
        "Never presents a credential to an Agent Card endpoint that has not declared a scheme accepting it",
    ),
    r("A2ACLI_AUTH_009", 3, "§10.3", "Mutual TLS"),
    r("A2ACLI_AUTH_010", 3, "§10.3", "OpenID Connect"),
    r(
        "A2ACLI_AUTH_011",
        3,
        "§10.3",
        "Handles in-task AUTH_REQUIRED resolution",
    ),
    r(
        "A2ACLI_DEMO_SERVER_001",
        3,
        "§5.1, §14",
        "demo-server / mock agent mode",
    ),
    r(
        "A2ACLI_VER_002",
        3,
        "§11.3, A2A §4.6",
        "Declares server-required protocol extensions",
    ),
];

/// Requirements no case exercises: their status and why.
pub(crate) const NOT_EXERCISED: &[(&str, &str, &str)] = &[
    ("A2ACLI_SKILL_001", "na", "the tool ships no Agent Skill"),
    ("A2ACLI_SKILL_002", "na", "the tool ships no Agent Skill"),
    (
        "A2ACLI_AUTH_005",
        "fail",
        "not met: no OAuth client yet (no `auth login`)",
    ),
    (
        "A2ACLI_AUTH_006",
        "fail",
        "not met: no OAuth client yet (no `auth login`)",
    ),
    (
        "A2ACLI_AUTH_007",
        "fail",
        "not met: no OAuth client yet, so no token storage",
    ),
    (
        "A2ACLI_AUTH_010",
        "fail",
        "not met: no OpenID Connect client yet",
    ),
    (
        "A2ACLI_DEMO_SERVER_001",
        "fail",
        "not met: no `demo-server` command (the repository's examples ship a separate demo-agent binary)",
    ),
];

/// Requirements whose passing cases show only part of them: the status they get and why.
pub(crate) const CAPPED: &[(&str, &str, &str)] = &[
    (
        "A2ACLI_OUT_007",
        "partial",
        "--debug logs the card fetch, transport choice, each request (method, URL, header names with values redacted) and every A2A request and response object as JSON, but not the binding's envelope bytes (JSON-RPC envelope, gRPC frames)",
    ),
    (
        "A2ACLI_CONFORM_001",
        "partial",
        "`conformance` runs the tool's own smoke checks (card fields, a 1.x interface, send, get, TaskNotFoundError, list, stream start), not the A2A TCK",
    ),
    (
        "A2ACLI_AUTH_009",
        "partial",
        "--cert/--key (and --ca-cert) on JSON-RPC and HTTP+JSON; gRPC over TLS is not built into the CLI (the grpc-tls feature of a2a-runtime is off)",
    ),
    (
        "A2ACLI_AUTH_011",
        "partial",
        "an AUTH_REQUIRED task stops the wait with exit 0 and a resume command (send --task-id with a credential); no interactive credential acquisition",
    ),
];

/// The §4.5 defaults: the row key, the case that shows it is shipped and overridable (None:
/// not overridable), and a note.
pub(crate) const DEFAULTS: &[(&str, Option<&str>, &str)] = &[
    (
        "transport_server_preference_order",
        Some("transports_follow_the_card_then_the_caller"),
        "--transport, repeatable",
    ),
    (
        "task_completion_wait_by_default",
        Some("send_blocks_by_default_and_async_returns_ids"),
        "--async (aliases --return-immediately, --no-wait)",
    ),
    (
        "output_human_readable_text",
        Some("text_output_is_the_label_value_floor"),
        "-o json",
    ),
    (
        "detail_level_concise",
        Some("verbose_shows_every_part"),
        "--verbose",
    ),
    (
        "protocol_version_highest_mutual",
        Some("version_is_signaled_and_never_downgraded"),
        "--a2a-version 0.3 opts in to a legacy agent",
    ),
    (
        "transport_security_tls_on",
        Some("tls_verification_is_off_only_with_insecure_and_never_silently"),
        "--insecure (-k, A2ACLI_INSECURE) turns verification off on the HTTP bindings, with a stderr warning (gRPC refuses it)",
    ),
];
