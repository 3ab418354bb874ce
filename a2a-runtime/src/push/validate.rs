//! The syntax of a push notification config: what is checked before the URL guard.

use crate::error::A2aError;
use crate::types::TaskPushNotificationConfig;

/// The longest webhook URL accepted (bytes).
pub const MAX_URL_LEN: usize = 2_048;
/// The longest token accepted (bytes).
pub const MAX_TOKEN_LEN: usize = 1_024;
/// The longest authentication scheme accepted (bytes).
pub const MAX_SCHEME_LEN: usize = 64;
/// The longest credentials accepted (bytes).
pub const MAX_CREDENTIALS_LEN: usize = 4_096;
/// The longest config id accepted (bytes).
pub const MAX_ID_LEN: usize = 256;

/// Checks every field of `config` and parses its URL; errors name the field, under `prefix`
/// (`""` for CreateTaskPushNotificationConfig, `configuration.taskPushNotificationConfig.`
/// inside SendMessage).
pub(crate) fn validate(
    config: &TaskPushNotificationConfig,
    prefix: &str,
) -> Result<url::Url, A2aError> {
    let field = |name: &str| format!("{prefix}{name}");
    let id = config.id.as_str();
    if id.len() > MAX_ID_LEN {
        return Err(A2aError::invalid_field(
            field("id"),
            format!("is {} bytes long; the most is {MAX_ID_LEN}", id.len()),
        ));
    }
    if let Some(c) = id.chars().find(|c| c.is_control() || c.is_whitespace()) {
        return Err(A2aError::invalid_field(
            field("id"),
            format!("must not contain whitespace or control characters (found {c:?})"),
        ));
    }
    let url = parse_url(&config.url).map_err(|e| A2aError::invalid_field(field("url"), e))?;
    header_value(&config.token, MAX_TOKEN_LEN)
        .map_err(|e| A2aError::invalid_field(field("token"), e))?;
    if let Some(auth) = &config.authentication {
        scheme(&auth.scheme)
            .map_err(|e| A2aError::invalid_field(field("authentication.scheme"), e))?;
        header_value(&auth.credentials, MAX_CREDENTIALS_LEN)
            .map_err(|e| A2aError::invalid_field(field("authentication.credentials"), e))?;
    }
    Ok(url)
}

/// An absolute http(s) URL with a host, no userinfo, no whitespace or control characters, at
/// most [`MAX_URL_LEN`] bytes.
pub(crate) fn parse_url(raw: &str) -> Result<url::Url, String> {
    if raw.is_empty() {
        return Err("is required".into());
    }
    if raw.len() > MAX_URL_LEN {
        return Err(format!(
            "is {} bytes long; the most is {MAX_URL_LEN}",
            raw.len()
        ));
    }
    if let Some(c) = raw.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "must not contain whitespace or control characters (found {c:?})"
        ));
    }
    // The URL standard reads `\` as `/` and `http:host` as `http://host`: a URL that needs
    // such repairs is refused rather than guessed at.
    if raw.contains('\\') {
        return Err("must not contain a backslash".into());
    }
    let scheme_end = raw.find("://").ok_or("must be an absolute http(s) URL")?;
    let scheme = &raw[..scheme_end];
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(format!("must use http or https, not {scheme:?}"));
    }
    let authority = raw[scheme_end + 3..]
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default();
    if authority.contains('@') {
        return Err("must not carry userinfo (user:password@)".into());
    }
    if authority.is_empty() {
        return Err("must name a host".into());
    }
    let url = url::Url::parse(raw).map_err(|e| format!("is not a valid URL ({e})"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not carry userinfo (user:password@)".into());
    }
    if url.host().is_none() {
        return Err("must name a host".into());
    }
    Ok(url)
}

/// A header value: printable ASCII (no CR, LF or other control character), at most `max` bytes.
fn header_value(value: &str, max: usize) -> Result<(), String> {
    if value.len() > max {
        return Err(format!("is {} bytes long; the most is {max}", value.len()));
    }
    if let Some(c) = value.chars().find(|c| !(' '..='~').contains(c)) {
        return Err(format!(
            "must be printable ASCII without CR, LF or control characters (found {c:?})"
        ));
    }
    Ok(())
}

/// An HTTP authentication scheme: a token (RFC 9110 `tchar`s), at most [`MAX_SCHEME_LEN`].
fn scheme(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("is required".into());
    }
    if value.len() > MAX_SCHEME_LEN {
        return Err(format!(
            "is {} bytes long; the most is {MAX_SCHEME_LEN}",
            value.len()
        ));
    }
    let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if let Some(c) = value.chars().find(|c| !tchar(*c)) {
        return Err(format!(
            "must be an HTTP authentication scheme such as Bearer (found {c:?})"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::types::AuthenticationInfo;

    fn field_of(e: &A2aError) -> String {
        match e {
            A2aError::InvalidParams { violations } => violations[0].field.clone(),
            other => format!("not InvalidParams: {other}"),
        }
    }

    #[test]
    fn urls_are_absolute_http_with_a_host_and_nothing_smuggled() {
        for ok in [
            "https://example.com/hook",
            "HTTP://example.com/",
            "HtTpS://Example.COM:8443/a?b=c",
            "http://[2606:4700::1]/",
        ] {
            assert!(parse_url(ok).is_ok(), "{ok}");
        }
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_LEN));
        for bad in [
            "",
            "example.com/hook",
            "ftp://example.com/",
            "file:///etc/passwd",
            "http:example.com",
            "http:/example.com",
            "http:///path",
            "http://",
            "http://exa mple.com/",
            "http://example.com/\r\nX: y",
            "http://example.com/\t",
            "http://user@example.com/",
            "http://user:pw@example.com/",
            "http://example.com@127.0.0.1/",
            "http://:pw@example.com/",
            "http:\\\\example.com\\",
            "http://example.com:99999/",
            long.as_str(),
        ] {
            assert!(parse_url(bad).is_err(), "{bad:?} must be refused");
        }
    }

    #[test]
    fn every_field_is_checked_and_named() {
        let base = TaskPushNotificationConfig {
            url: "https://example.com/hook".into(),
            token: "tok".into(),
            authentication: Some(AuthenticationInfo {
                scheme: "Bearer".into(),
                credentials: "abc".into(),
            }),
            ..Default::default()
        };
        assert!(validate(&base, "").is_ok());
        let mut c = base.clone();
        c.token = "a\r\nb".into();
        assert_eq!(field_of(&validate(&c, "").unwrap_err()), "token");
        let mut c = base.clone();
        c.token = "x".repeat(MAX_TOKEN_LEN + 1);
        assert_eq!(field_of(&validate(&c, "").unwrap_err()), "token");
        let mut c = base.clone();
        c.authentication = Some(AuthenticationInfo {
            scheme: "Bearer\r\nX-Evil: 1".into(),
            credentials: String::new(),
        });
        assert_eq!(
            field_of(&validate(&c, "").unwrap_err()),
            "authentication.scheme"
        );
        let mut c = base.clone();
        c.authentication = Some(AuthenticationInfo {
            scheme: "Basic".into(),
            credentials: "a\nb".into(),
        });
        assert_eq!(
            field_of(&validate(&c, "p.").unwrap_err()),
            "p.authentication.credentials"
        );
        let mut c = base;
        c.url = "http://exa mple.com/".into();
        assert_eq!(
            field_of(&validate(&c, "configuration.taskPushNotificationConfig.").unwrap_err()),
            "configuration.taskPushNotificationConfig.url"
        );
    }
}
