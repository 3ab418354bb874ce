//! The URL guard: which webhook destinations the server may call.
//!
//! A destination must be a global unicast address on a web port. Checked when a config is
//! registered (the URL's literal address, its host name, and the addresses the name resolves
//! to) and again when the sender connects, on the very addresses it connects to: the sender's
//! HTTP client resolves names through [`GuardedDns`], which drops every address the guard
//! refuses, so a name that resolved to a public address at registration and to a private one
//! later (DNS rebinding) is never connected to.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

/// Resolves host names for the URL guard and the sender.
///
/// The default is [`SystemResolver`] (the operating system's resolver); tests and deployments
/// with their own DNS can give another to [`PushConfig::resolver`](super::PushConfig::resolver).
///
/// ```
/// use std::net::IpAddr;
/// use a2a_runtime::push::HostResolver;
///
/// #[derive(Debug)]
/// struct Fixed(IpAddr);
///
/// #[a2a_runtime::async_trait]
/// impl HostResolver for Fixed {
///     async fn resolve(&self, _host: &str) -> std::io::Result<Vec<IpAddr>> {
///         Ok(vec![self.0])
///     }
/// }
/// ```
#[async_trait::async_trait]
pub trait HostResolver: Send + Sync + fmt::Debug + 'static {
    /// The addresses of `host` (a domain name, never an IP literal).
    async fn resolve(&self, host: &str) -> std::io::Result<Vec<IpAddr>>;
}

/// The operating system's resolver.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemResolver;

#[async_trait::async_trait]
impl HostResolver for SystemResolver {
    async fn resolve(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        let addrs = tokio::net::lookup_host((host, 0)).await?;
        Ok(addrs.map(|a| a.ip()).collect())
    }
}

/// Why the guard refused a destination.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Blocked {
    /// The address is not a global unicast address.
    #[error("{addr} is a {range} address, which webhooks may not target")]
    Address {
        /// The refused address.
        addr: IpAddr,
        /// The special-purpose range it is in.
        range: &'static str,
    },
    /// The host name is a local or internal name.
    #[error("host {host:?} is a local or internal name, which webhooks may not target")]
    Host {
        /// The refused name.
        host: String,
    },
    /// The port is not a web port.
    #[error("port {port} is not allowed: webhooks may use ports 80, 443 and 1024-65535")]
    Port {
        /// The refused port.
        port: u16,
    },
    /// The name resolved to no address the guard allows.
    #[error("host {host:?} resolves to no address webhooks may target ({reason})")]
    Resolved {
        /// The name.
        host: String,
        /// The first refusal.
        reason: String,
    },
}

/// The special-purpose range of an IPv4 address that webhooks may not target, if any.
///
/// Every range of the IANA IPv4 special-purpose registry is refused, whether or not the
/// registry marks it globally reachable (AS112, AMT and the 6to4 relay are never webhooks).
pub(crate) fn ipv4_range(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    let r = match (a, b, c) {
        (0, _, _) => "\"this network\" (0.0.0.0/8)",
        (10, _, _) => "private (10.0.0.0/8)",
        (100, 64..=127, _) => "shared/CGNAT (100.64.0.0/10)",
        (127, _, _) => "loopback (127.0.0.0/8)",
        (169, 254, _) => "link-local (169.254.0.0/16)",
        (172, 16..=31, _) => "private (172.16.0.0/12)",
        (192, 0, 0) => "IETF protocol assignment (192.0.0.0/24)",
        (192, 0, 2) => "documentation (192.0.2.0/24)",
        (192, 31, 196) => "AS112 (192.31.196.0/24)",
        (192, 52, 193) => "AMT (192.52.193.0/24)",
        (192, 88, 99) => "6to4 relay anycast (192.88.99.0/24)",
        (192, 168, _) => "private (192.168.0.0/16)",
        (192, 175, 48) => "AS112 direct delegation (192.175.48.0/24)",
        (198, 18..=19, _) => "benchmarking (198.18.0.0/15)",
        (198, 51, 100) => "documentation (198.51.100.0/24)",
        (203, 0, 113) => "documentation (203.0.113.0/24)",
        (224..=239, _, _) => "multicast (224.0.0.0/4)",
        (240..=255, _, _) => "reserved or broadcast (240.0.0.0/4)",
        _ => return None,
    };
    Some(r)
}

/// The special-purpose range of an IPv6 address that webhooks may not target, if any.
///
/// Only global unicast (2000::/3) outside every IANA special-purpose block passes. An IPv4
/// address carried inside IPv6 (IPv4-mapped, NAT64 well-known prefix, 6to4) is judged as the
/// IPv4 address it carries; IPv4-compatible addresses (deprecated) and Teredo are refused.
pub(crate) fn ipv6_range(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    if ip.is_unspecified() {
        return Some("unspecified (::/128)");
    }
    if ip.is_loopback() {
        return Some("loopback (::1/128)");
    }
    if let Some(v4) = ip.to_ipv4_mapped() {
        return ipv4_range(v4).map(|_| "IPv4-mapped form of a refused IPv4 (::ffff:0:0/96)");
    }
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    let r = match s {
        [0, 0, 0, 0, 0, 0, _, _] => "IPv4-compatible (::/96, deprecated)",
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => {
            return ipv4_range(embedded(hi, lo))
                .map(|_| "NAT64 form of a refused IPv4 (64:ff9b::/96)");
        }
        [0x64, 0xff9b, 1, ..] => "local-use NAT64 (64:ff9b:1::/48)",
        [0x100, 0, 0, 0, ..] => "discard-only (100::/64)",
        [0x2001, 0x0db8, ..] => "documentation (2001:db8::/32)",
        [0x2001, 0, ..] => "Teredo (2001::/32)",
        [0x2001, x, ..] if x < 0x200 => "IETF protocol assignment (2001::/23)",
        [0x2002, hi, lo, ..] => {
            return ipv4_range(embedded(hi, lo)).map(|_| "6to4 form of a refused IPv4 (2002::/16)");
        }
        [0x3fff, x, ..] if x < 0x1000 => "documentation (3fff::/20)",
        [0x5f00, ..] => "SRv6 SIDs (5f00::/16)",
        [x, ..] if x & 0xfe00 == 0xfc00 => "unique local (fc00::/7)",
        [x, ..] if x & 0xffc0 == 0xfe80 => "link-local (fe80::/10)",
        [x, ..] if x & 0xffc0 == 0xfec0 => "site-local (fec0::/10, deprecated)",
        [x, ..] if x & 0xff00 == 0xff00 => "multicast (ff00::/8)",
        [x, ..] if x & 0xe000 != 0x2000 => "reserved (outside global unicast 2000::/3)",
        _ => return None,
    };
    Some(r)
}

/// The special-purpose range of `ip` that webhooks may not target, if any.
pub(crate) fn ip_range(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => ipv4_range(v4),
        IpAddr::V6(v6) => ipv6_range(v6),
    }
}

/// Checks an address.
pub(crate) fn check_ip(ip: IpAddr) -> Result<(), Blocked> {
    match ip_range(ip) {
        Some(range) => Err(Blocked::Address { addr: ip, range }),
        None => Ok(()),
    }
}

/// Checks a port: 80, 443 and the unprivileged ports 1024-65535. Other well-known ports (SSH,
/// SMTP, DNS, databases below 1024...) are never a webhook.
pub(crate) fn check_port(port: u16) -> Result<(), Blocked> {
    match port {
        80 | 443 | 1024..=u16::MAX => Ok(()),
        _ => Err(Blocked::Port { port }),
    }
}

/// Names that are local or internal by definition (RFC 6761, RFC 8375, cloud metadata).
const LOCAL_SUFFIXES: &[&str] = &[
    "localhost",
    "local",
    "localdomain",
    "internal",
    "intranet",
    "lan",
    "home",
    "corp",
    "home.arpa",
    "arpa",
    "invalid",
    "test",
    "example",
    "onion",
];

/// Checks a host name (lowercase, as the URL parser gives it): single-label names and names
/// under a local suffix (`localhost`, `*.localhost`, `*.local`, `*.internal` such as
/// `metadata.google.internal`, `*.home.arpa`...) are refused.
pub(crate) fn check_host_name(host: &str) -> Result<(), Blocked> {
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    let local = !name.contains('.')
        || LOCAL_SUFFIXES
            .iter()
            .any(|s| name == *s || name.strip_suffix(s).is_some_and(|p| p.ends_with('.')));
    if local {
        Err(Blocked::Host {
            host: host.to_owned(),
        })
    } else {
        Ok(())
    }
}

/// Checks the addresses a name resolved to: every one must be allowed (a name with a private
/// address among public ones is hostile, or misconfigured), and there must be one.
pub(crate) fn check_resolved(host: &str, resolved: &[IpAddr]) -> Result<(), Blocked> {
    let refusal = match resolved.iter().find_map(|ip| check_ip(*ip).err()) {
        Some(e) => e.to_string(),
        None if resolved.is_empty() => "no address".to_owned(),
        None => return Ok(()),
    };
    Err(Blocked::Resolved {
        host: host.to_owned(),
        reason: refusal,
    })
}

/// The sender's DNS: resolves through a [`HostResolver`] and keeps only the addresses the guard
/// allows, so that the HTTP client connects to checked addresses only.
pub(crate) struct GuardedDns {
    pub(crate) resolver: Arc<dyn HostResolver>,
    /// With the guard off, every address is kept.
    pub(crate) allow_private: bool,
}

impl reqwest::dns::Resolve for GuardedDns {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let resolver = self.resolver.clone();
        let allow_private = self.allow_private;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let ips = resolver.resolve(&host).await?;
            if !allow_private {
                check_resolved(&host, &ips)?;
            }
            let addrs: reqwest::dns::Addrs =
                Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn v4(s: &str) -> Option<&'static str> {
        ipv4_range(s.parse().unwrap())
    }
    fn v6(s: &str) -> Option<&'static str> {
        ipv6_range(s.parse().unwrap())
    }

    #[test]
    fn every_ipv4_special_range_is_refused_and_public_addresses_pass() {
        for a in [
            "0.0.0.0",
            "0.1.2.3",
            "10.0.0.1",
            "100.64.0.1",
            "100.127.255.254",
            "127.0.0.1",
            "127.255.255.255",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.9",
            "192.0.2.1",
            "192.31.196.1",
            "192.52.193.1",
            "192.88.99.1",
            "192.168.1.1",
            "192.175.48.1",
            "198.18.0.1",
            "198.19.255.255",
            "198.51.100.1",
            "203.0.113.1",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
        ] {
            assert!(v4(a).is_some(), "{a} must be refused");
        }
        for a in [
            "8.8.8.8",
            "1.1.1.1",
            "93.184.216.34",
            "100.63.255.255",
            "100.128.0.1",
            "172.15.255.255",
            "172.32.0.1",
            "192.0.1.1",
            "198.17.255.255",
            "198.20.0.1",
            "223.255.255.254",
        ] {
            assert_eq!(v4(a), None, "{a} is public");
        }
    }

    #[test]
    fn every_ipv6_special_range_is_refused_and_global_unicast_passes() {
        for a in [
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "::8.8.8.8",
            "64:ff9b::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::1",
            "100::1",
            "2001::1",
            "2001:2::1",
            "2001:10::1",
            "2001:db8::1",
            "2002:7f00:1::1",
            "2002:c0a8:101::1",
            "3fff::1",
            "5f00::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "ff02::1",
            "ff0e::1",
            "4000::1",
            "1::1",
        ] {
            assert!(v6(a).is_some(), "{a} must be refused");
        }
        for a in [
            "2606:4700:4700::1111",
            "2a00:1450:4001::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "2001:200::1",
        ] {
            assert_eq!(v6(a), None, "{a} is global unicast");
        }
    }

    #[test]
    fn local_names_and_ports_are_refused() {
        for h in [
            "localhost",
            "LOCALHOST.",
            "a.localhost",
            "metadata.google.internal",
            "metadata",
            "printer.local",
            "router.home.arpa",
            "1.0.0.127.in-addr.arpa",
            "intranet",
        ] {
            assert!(check_host_name(h).is_err(), "{h} must be refused");
        }
        for h in ["example.com", "hooks.example.org", "localhost.example.com"] {
            assert!(check_host_name(h).is_ok(), "{h} is fine");
        }
        for p in [0, 21, 22, 25, 53, 110, 445, 1023] {
            assert!(check_port(p).is_err(), "port {p}");
        }
        for p in [80, 443, 1024, 8080, 65535] {
            assert!(check_port(p).is_ok(), "port {p}");
        }
    }

    #[test]
    fn a_name_with_any_refused_address_is_refused() {
        let public = IpAddr::V4(Ipv4Addr::new(93, 184, 216, 34));
        let local = IpAddr::V4(Ipv4Addr::LOCALHOST);
        assert!(check_resolved("x.example.com", &[local]).is_err());
        assert!(check_resolved("x.example.com", &[]).is_err());
        assert!(check_resolved("x.example.com", &[public, local]).is_err());
        assert!(check_resolved("x.example.com", &[public]).is_ok());
    }
}
