//! A cook's RSA key pair, with which the activities sent in their name are
//! signed, and the public keys other sites' actors are checked with.
//!
//! 2048-bit RSA with PKCS#1 v1.5 and SHA-256 (`rsa-sha256`), because it is
//! what Mastodon and the rest of the fediverse sign and check. Only
//! signing uses the private key; nothing here decrypts.

use rsa::pkcs1::DecodeRsaPublicKey;
use rsa::pkcs1v15::{Signature, SigningKey, VerifyingKey};
use rsa::pkcs8::{
    DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, LineEnding,
};
use rsa::signature::{SignatureEncoding, Signer, Verifier};
use rsa::{RsaPrivateKey, RsaPublicKey};
use sha2::Sha256;

/// The size of the keys made here, in bits.
pub const KEY_BITS: usize = 2048;
/// The largest key read from another site, in bits: a larger one would
/// make every check of its signatures slow.
const MAX_KEY_BITS: usize = 8192;

/// A key pair: signs, and says its public half.
#[derive(Clone)]
pub struct KeyPair {
    signing: SigningKey<Sha256>,
    public_pem: String,
}

impl std::fmt::Debug for KeyPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the private half.
        f.debug_struct("KeyPair").finish_non_exhaustive()
    }
}

/// A key that is not one: a PEM that does not read, or a size refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a usable RSA key: {0}")]
pub struct BadKey(pub String);

impl KeyPair {
    /// A new key pair, from the system's random numbers: a fraction of a
    /// second of a core.
    pub fn generate() -> Result<KeyPair, BadKey> {
        let private = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, KEY_BITS)
            .map_err(|e| BadKey(e.to_string()))?;
        KeyPair::from_private(private)
    }

    fn from_private(private: RsaPrivateKey) -> Result<KeyPair, BadKey> {
        let public_pem = private
            .to_public_key()
            .to_public_key_pem(LineEnding::LF)
            .map_err(|e| BadKey(e.to_string()))?;
        Ok(KeyPair {
            signing: SigningKey::new(private),
            public_pem,
        })
    }

    /// The key pair kept as `pem` (PKCS#8).
    pub fn from_pem(pem: &str) -> Result<KeyPair, BadKey> {
        let private = RsaPrivateKey::from_pkcs8_pem(pem).map_err(|e| BadKey(e.to_string()))?;
        KeyPair::from_private(private)
    }

    /// The private key as it is kept (PKCS#8 PEM).
    pub fn to_pem(&self) -> Result<String, BadKey> {
        let private: &RsaPrivateKey = self.signing.as_ref();
        private
            .to_pkcs8_pem(LineEnding::LF)
            .map(|pem| pem.to_string())
            .map_err(|e| BadKey(e.to_string()))
    }

    /// The public key, as an actor document gives it (SPKI PEM).
    pub fn public_pem(&self) -> &str {
        &self.public_pem
    }

    /// The rsa-sha256 signature of `data`.
    pub fn sign(&self, data: &[u8]) -> Vec<u8> {
        self.signing.sign(data).to_vec()
    }
}

/// A public key read from another site's actor document.
#[derive(Clone, Debug)]
pub struct PublicKey(VerifyingKey<Sha256>);

impl PublicKey {
    /// The key in `pem`: SPKI (`BEGIN PUBLIC KEY`, what Mastodon serves)
    /// or PKCS#1 (`BEGIN RSA PUBLIC KEY`), of at most `MAX_KEY_BITS`.
    pub fn from_pem(pem: &str) -> Result<PublicKey, BadKey> {
        let pem = pem.trim();
        let key = RsaPublicKey::from_public_key_pem(pem)
            .or_else(|_| RsaPublicKey::from_pkcs1_pem(pem))
            .map_err(|e| BadKey(e.to_string()))?;
        let bits = rsa::traits::PublicKeyParts::size(&key) * 8;
        if !(KEY_BITS..=MAX_KEY_BITS).contains(&bits) {
            return Err(BadKey(format!(
                "{bits} bits, where {KEY_BITS} to {MAX_KEY_BITS} are taken"
            )));
        }
        Ok(PublicKey(VerifyingKey::new(key)))
    }

    /// Whether `signature` is this key's rsa-sha256 signature of `data`.
    pub fn verifies(&self, data: &[u8], signature: &[u8]) -> bool {
        Signature::try_from(signature)
            .map(|signature| self.0.verify(data, &signature).is_ok())
            .unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_verifies_with_its_public_key_only_and_only_for_its_data() {
        let pair = KeyPair::generate().unwrap();
        let again = KeyPair::from_pem(&pair.to_pem().unwrap()).unwrap();
        assert_eq!(pair.public_pem(), again.public_pem());
        let signature = again.sign(b"(request-target): post /inbox");
        let public = PublicKey::from_pem(pair.public_pem()).unwrap();
        assert!(public.verifies(b"(request-target): post /inbox", &signature));
        assert!(!public.verifies(b"(request-target): post /inbox2", &signature));
        let other = KeyPair::generate().unwrap();
        let other = PublicKey::from_pem(other.public_pem()).unwrap();
        assert!(!other.verifies(b"(request-target): post /inbox", &signature));
        assert!(!public.verifies(b"(request-target): post /inbox", b"short"));
    }

    #[test]
    fn a_key_that_is_not_one_is_refused() {
        assert!(
            PublicKey::from_pem("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----")
                .is_err()
        );
        assert!(KeyPair::from_pem("not a key").is_err());
        // 1024 bits: too weak to take.
        let small = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 1024).unwrap();
        let pem = small
            .to_public_key()
            .to_public_key_pem(LineEnding::LF)
            .unwrap();
        assert!(PublicKey::from_pem(&pem)
            .unwrap_err()
            .0
            .contains("1024 bits"));
    }
}
