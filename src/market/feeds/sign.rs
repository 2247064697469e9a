//! Request signatures of the keyed China sources, each as its documentation specifies; the
//! documentation's own worked examples are the tests.
//!
//! - Tencent Cloud API 3.0, `TC3-HMAC-SHA256` (cloud.tencent.com/document/api/213/30654).
//! - Alibaba Cloud RPC (ECS) signature, HMAC-SHA1 with `SignatureVersion` 1.0 (ECS API
//!   reference, "Request signatures").

use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

fn hmac256(key: &[u8], msg: &[u8]) -> Vec<u8> {
    let mut m = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    m.update(msg);
    m.finalize().into_bytes().to_vec()
}

fn sha256_hex(data: &[u8]) -> String {
    super::http::hex(&Sha256::digest(data))
}

/// A Tencent Cloud API 3.0 call: the headers of a signed POST of `payload` (JSON).
pub struct Tc3<'a> {
    pub secret_id: &'a str,
    pub secret_key: &'a str,
    pub service: &'a str,
    pub host: &'a str,
    pub action: &'a str,
    pub version: &'a str,
    pub region: Option<&'a str>,
    pub timestamp: u64,
}

/// The content type the signature covers.
pub const TC3_CONTENT_TYPE: &str = "application/json; charset=utf-8";

impl Tc3<'_> {
    /// The string to sign and the signature (hex) of `payload`.
    pub fn sign(&self, payload: &str) -> (String, String) {
        let canonical = format!(
            "POST\n/\n\ncontent-type:{TC3_CONTENT_TYPE}\nhost:{}\n\ncontent-type;host\n{}",
            self.host,
            sha256_hex(payload.as_bytes())
        );
        let date = utc_date(self.timestamp);
        let scope = format!("{date}/{}/tc3_request", self.service);
        let to_sign = format!(
            "TC3-HMAC-SHA256\n{}\n{scope}\n{}",
            self.timestamp,
            sha256_hex(canonical.as_bytes())
        );
        let k_date = hmac256(
            format!("TC3{}", self.secret_key).as_bytes(),
            date.as_bytes(),
        );
        let k_service = hmac256(&k_date, self.service.as_bytes());
        let k_signing = hmac256(&k_service, b"tc3_request");
        let sig = super::http::hex(&hmac256(&k_signing, to_sign.as_bytes()));
        (to_sign, sig)
    }

    /// The `Authorization` header.
    pub fn authorization(&self, payload: &str) -> String {
        let (_, sig) = self.sign(payload);
        format!(
            "TC3-HMAC-SHA256 Credential={}/{}/{}/tc3_request, SignedHeaders=content-type;host, Signature={sig}",
            self.secret_id,
            utc_date(self.timestamp),
            self.service
        )
    }

    /// Every header of the call.
    pub fn headers(&self, payload: &str) -> Vec<(String, String)> {
        let mut h = vec![
            ("Authorization".to_string(), self.authorization(payload)),
            ("Content-Type".into(), TC3_CONTENT_TYPE.into()),
            ("X-TC-Action".into(), self.action.into()),
            ("X-TC-Timestamp".into(), self.timestamp.to_string()),
            ("X-TC-Version".into(), self.version.into()),
        ];
        if let Some(r) = self.region {
            h.push(("X-TC-Region".into(), r.into()));
        }
        h
    }
}

/// `YYYY-MM-DD` (UTC) of a Unix time.
fn utc_date(secs: u64) -> String {
    humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
        .to_string()[..10]
        .to_string()
}

/// Alibaba's percent-encoding: RFC 3986 unreserved characters kept, everything else `%XX`
/// (a space is `%20`, `*` is `%2A`, `~` stays).
pub fn ali_escape(s: &str) -> String {
    super::http::query_escape(s)
}

/// The Alibaba Cloud RPC signature (base64) of a call with `params` (every parameter but
/// `Signature`) by `method`, and the string it signs.
pub fn alibaba(method: &str, params: &[(String, String)], secret: &str) -> (String, String) {
    let mut p: Vec<(String, String)> = params
        .iter()
        .map(|(k, v)| (ali_escape(k), ali_escape(v)))
        .collect();
    p.sort();
    let canonical = p
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");
    let to_sign = format!("{method}&%2F&{}", ali_escape(&canonical));
    let mut m = Hmac::<sha1::Sha1>::new_from_slice(format!("{secret}&").as_bytes())
        .expect("HMAC takes any key length");
    m.update(to_sign.as_bytes());
    let sig = base64::engine::general_purpose::STANDARD.encode(m.finalize().into_bytes());
    (to_sign, sig)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tencent Cloud's worked example (API 3.0 "Signature v3", CVM DescribeInstances).
    #[test]
    fn tc3_signs_the_documented_example() {
        let t = Tc3 {
            secret_id: "AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE",
            secret_key: "Gu5t9xGARNpq86cd98joQYCN3EXAMPLE",
            service: "cvm",
            host: "cvm.tencentcloudapi.com",
            action: "DescribeInstances",
            version: "2017-03-12",
            region: Some("ap-guangzhou"),
            timestamp: 1551113065,
        };
        let payload = r#"{"Limit": 1, "Filters": [{"Values": ["\u672a\u547d\u540d"], "Name": "instance-name"}]}"#;
        assert_eq!(
            sha256_hex(payload.as_bytes()),
            "35e9c5b0e3ae67532d3c9f17ead6c90222632e5b1ff7f6e89887f1398934f064"
        );
        let (to_sign, sig) = t.sign(payload);
        assert_eq!(
            to_sign,
            "TC3-HMAC-SHA256\n1551113065\n2019-02-25/cvm/tc3_request\n5ffe6a04c0664d6b969fab9a13bdab201d63ee709638e2749d62a09ca18d7031"
        );
        assert_eq!(
            sig,
            "72e494ea809ad7a8c8f7a4507b9bddcbaa8e581f516e8da2f66e2c5a96525168"
        );
        assert_eq!(
            t.authorization(payload),
            "TC3-HMAC-SHA256 Credential=AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE/2019-02-25/cvm/tc3_request, SignedHeaders=content-type;host, Signature=72e494ea809ad7a8c8f7a4507b9bddcbaa8e581f516e8da2f66e2c5a96525168"
        );
    }

    /// Alibaba Cloud's worked example (ECS "Request signatures", DescribeRegions).
    #[test]
    fn alibaba_signs_the_documented_example() {
        let params: Vec<(String, String)> = [
            ("Timestamp", "2016-02-23T12:46:24Z"),
            ("Format", "XML"),
            ("AccessKeyId", "testid"),
            ("Action", "DescribeRegions"),
            ("SignatureMethod", "HMAC-SHA1"),
            ("SignatureNonce", "3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf"),
            ("Version", "2014-05-26"),
            ("SignatureVersion", "1.0"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let (to_sign, sig) = alibaba("GET", &params, "testsecret");
        assert_eq!(
            to_sign,
            "GET&%2F&AccessKeyId%3Dtestid%26Action%3DDescribeRegions%26Format%3DXML%26SignatureMethod%3DHMAC-SHA1%26SignatureNonce%3D3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf%26SignatureVersion%3D1.0%26Timestamp%3D2016-02-23T12%253A46%253A24Z%26Version%3D2014-05-26"
        );
        assert_eq!(sig, "OLeaidS1JvxuMvnyHOwuJ+uX5qY=");
        assert_eq!(ali_escape(&sig), "OLeaidS1JvxuMvnyHOwuJ%2BuX5qY%3D");
    }
}
