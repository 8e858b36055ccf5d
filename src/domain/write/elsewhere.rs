//! Recipes kept from other sites. The parent of a fork across sites is
//! kept here as a recipe of its own: named by its address there
//! (`Slug::elsewhere`), with no author here, listed nowhere, and reached
//! by no route. Its versions are facts, so a fork of it is compared, brought
//! up to date and merged as any fork is (issue 54).
//!
//! Its versions are those this site has fetched, in the order fetched, each
//! with the address of the version it was there (`:recipe/source-url`).
//! Only its author there, as first kept, changes it: a new version when
//! their site tells of one (or a fetch finds one), its retirement when they
//! delete it.

use super::{
    free_slug, next_count, recipe_content_map, stamp, Change, Recipes, Snapshot, Transaction,
};
use crate::domain::ids::VersionNumber;
use crate::domain::read::RETIRED;
use crate::domain::slug::Slug;
use crate::domain::{diff, Content, DomainError, Source};
use crate::store::TxReport;

/// A recipe on another site, as fetched: to keep, or to fork.
#[derive(Debug, Clone)]
pub struct RemoteParent {
    /// Its address there (its ActivityPub id).
    pub address: String,
    pub content: Content,
    /// The version fetched, by its address, and the recipe's name with its
    /// author's (`Soup, by @ann@a.example`).
    pub source: Source,
    /// Its author there, by actor id.
    pub author: String,
    /// The author's inbox, told of a fork.
    pub author_inbox: String,
}

/// The most versions a recipe kept from another site may have: each is a
/// transaction here (`keep_remote`), and its site says how many there are.
pub(crate) const MAX_KEPT_VERSIONS: u32 = 250;

/// One step of keeping a recipe from elsewhere.
enum Kept {
    /// Kept, at this version.
    At(VersionNumber),
    /// Kept as it was, at this version: nothing to write.
    Unchanged(VersionNumber),
    /// A version written on the way to the one fetched: another step.
    Stepped,
}

impl Recipes {
    /// Keeps `remote` here, at the version its site numbers it (its
    /// `version`, else the one after the kept one's where the content
    /// differs): made the first time, and brought up to it after. Its
    /// versions here are numbered as there, so that every link to one
    /// (`{address}/versions/{n}`), every "version n" a page says and every
    /// "brought in version n" in history means the same version on both
    /// sites. A version this site never fetched is a transaction of its
    /// own holding the one before's content (it is never merged from: a
    /// merge starts and ends at versions fetched). Each step is decided
    /// on the latest value. Refused when another author kept it first,
    /// when the version fetched is older than the kept one, or when it
    /// would have more than `MAX_KEPT_VERSIONS`. Its name here and its
    /// newest version (a retired one is left as it is).
    pub fn keep_remote(&self, remote: &RemoteParent) -> Result<(Slug, VersionNumber), DomainError> {
        let slug = Slug::elsewhere_checked(&remote.address)?;
        self.check_picture(&remote.content)?;
        let fetched = remote_version(&remote.address, &remote.source.url);
        if fetched == Some(0) {
            return Err(DomainError::Invalid(format!(
                "{} says it is at version 0",
                remote.address
            )));
        }
        // Told again of what it keeps, it writes nothing (read first on
        // the published value, then each step decided in the writer).
        if let (_, Kept::Unchanged(version)) =
            self.keep_step(&self.snapshot(), &slug, remote, fetched)?
        {
            return Ok((slug, version));
        }
        // The steps are made durable, and seen, together: no reader (a
        // bring-in's page) meets a version on the way as the newest, and
        // one flush covers them all. Through a log each step waits for
        // its append, and may be seen alone (`transact_deferred_with`).
        let (kept, last) = loop {
            let (report, kept) = self.store.transact_deferred_with(|db| {
                let view = self.view_of(db);
                self.keep_step(&view, &slug, remote, fetched)
            })?;
            match kept {
                Kept::At(version) | Kept::Unchanged(version) => {
                    break (version, report.basis_after)
                }
                Kept::Stepped => {}
            }
        };
        // Durable in order: the last step's flush covers the ones before.
        self.store.wait_durable(last)?;
        Ok((slug, kept))
    }

    /// One transaction of `keep_remote`: the recipe made, a version this
    /// site did not fetch, or the version fetched.
    fn keep_step(
        &self,
        view: &Snapshot,
        slug: &Slug,
        remote: &RemoteParent,
        fetched: Option<u64>,
    ) -> Result<(Transaction, Kept), DomainError> {
        let attrs = &self.attrs;
        let note = format!("Fetched from {}", remote.source.url);
        let at = |n: u64| format!("{}/versions/{n}", remote.address);
        let mut tx = Transaction::new();
        tx.tx_attr(attrs.tx_note, note.as_str());
        let Some(id) = view.find(slug)? else {
            if fetched.is_some_and(|n| n > u64::from(MAX_KEPT_VERSIONS)) {
                return Err(too_many_versions(remote));
            }
            let first = match fetched {
                Some(n) if n > 1 => at(1),
                _ => remote.source.url.clone(),
            };
            tx.map(
                recipe_content_map("kept", slug, &remote.content, &Change::by("", ""), attrs)
                    .with(attrs.remote_author, remote.author.as_str())
                    .with(attrs.remote_inbox, remote.author_inbox.as_str())
                    .with(attrs.source_url, first.as_str())
                    .with(attrs.source_name, remote.source.name.as_str()),
            );
            return Ok((tx, Kept::Stepped));
        };
        let kept = view.recipe_by_id(id)?;
        check_remote_author(view, slug, id, &remote.author)?;
        let newest = u64::from(kept.newest().get());
        let wanted = match fetched {
            Some(n) => n,
            None if kept.content == remote.content => newest,
            None => newest + 1,
        };
        if wanted > u64::from(MAX_KEPT_VERSIONS) {
            return Err(too_many_versions(remote));
        }
        if wanted < newest {
            return Err(DomainError::Invalid(format!(
                "this site keeps version {newest} of {}, newer than the version {wanted} asked \
                 for: fork it at its newest",
                kept.content.title()
            )));
        }
        if kept.retired || wanted == newest {
            return Ok((Transaction::new(), Kept::Unchanged(kept.newest())));
        }
        let e = id.entity();
        // The author's inbox as last told (kept recipes made before it was
        // kept have it from their next step).
        let inbox_moved =
            view.string(e, attrs.remote_inbox)?.as_deref() != Some(remote.author_inbox.as_str());
        if inbox_moved {
            tx.add(e, attrs.remote_inbox, remote.author_inbox.as_str());
        }
        let next = newest + 1;
        if next < wanted || kept.content == remote.content {
            tx.add(e, attrs.source_url, at(next).as_str())
                .add(e, attrs.version_count, next as i64);
            return Ok((tx, Kept::Stepped));
        }
        let what = diff::summary(&kept.content, &remote.content);
        let change = Change::by("", &note);
        let mut tx = self.version_transaction(view, &kept, &remote.content, &change, what, None)?;
        tx.add(e, attrs.source_url, remote.source.url.as_str())
            .add(e, attrs.source_name, remote.source.name.as_str())
            .tx_attr(attrs.tx_note, note.as_str());
        if inbox_moved {
            tx.add(e, attrs.remote_inbox, remote.author_inbox.as_str());
        }
        let version = kept.newest().next().unwrap_or(kept.newest());
        Ok((tx, Kept::At(version)))
    }

    /// Retires the recipe kept from `address`, its author there (`author`)
    /// having deleted it: whether there was one to retire. Its forks here
    /// stay, and say their parent was retired.
    pub fn retire_remote(&self, address: &str, author: &str) -> Result<bool, DomainError> {
        let attrs = &self.attrs;
        let slug = Slug::elsewhere_checked(address)?;
        if self.snapshot().find(&slug)?.is_none() {
            return Ok(false);
        }
        let (_, retired) = self.store.transact_with(|db| -> Result<_, DomainError> {
            let view = self.view_of(db);
            let mut tx = Transaction::new();
            let Some(id) = view.find(&slug)? else {
                return Ok((tx, false));
            };
            let kept = view.recipe_by_id(id)?;
            check_remote_author(&view, &slug, id, author)?;
            if kept.retired {
                return Ok((tx, false));
            }
            tx.add(id.entity(), attrs.retired, true)
                .add(id.entity(), attrs.version_count, next_count(&kept)?)
                .tx_attr(attrs.tx_change, RETIRED)
                .tx_attr(attrs.tx_note, "Deleted on its site");
            // As a recipe here retired: no suggestion to or from it is
            // left open, whether or not its site answers those to it.
            super::suggestions::close_all_of(&view, id, &mut tx)?;
            Ok((tx, true))
        })?;
        Ok(retired)
    }

    /// Forks `remote` for the cook of `change`: kept first (or brought up
    /// to date), then forked at that version under `slug` (numbered if
    /// taken). The author's inbox is a fact of the fork: they are told of
    /// it from the log (`:recipe/source-inbox`).
    pub fn fork_elsewhere(
        &self,
        remote: &RemoteParent,
        slug: &Slug,
        change: &Change,
    ) -> Result<(Slug, TxReport), DomainError> {
        let (kept, version) = self.keep_remote(remote)?;
        let mut stamped = Transaction::new();
        stamp(&mut stamped, change, &self.attrs)?;
        let (report, slug) = self.transact_once(change, |db| -> Result<_, DomainError> {
            let view = self.view_of(db);
            let slug = free_slug(&view, slug)?;
            let (map, slug) =
                self.fork_map(&view, &kept, Some(version), Some(&slug), |d| d, change)?;
            let mut tx = Transaction::new();
            tx.map(map.with(self.attrs.source_inbox, remote.author_inbox.as_str()));
            tx.extend(stamped.clone());
            Ok((tx, slug))
        })?;
        Ok((slug, report))
    }
}

/// Why `remote` is not kept: it has more versions than a kept recipe may.
fn too_many_versions(remote: &RemoteParent) -> DomainError {
    DomainError::Invalid(format!(
        "{} has more than {MAX_KEPT_VERSIONS} versions, the most kept from another site",
        remote.content.title()
    ))
}

/// The number of the version at `url`, where it is a version of the
/// recipe at `address` (`{address}/versions/{n}`), as forkful names them.
pub(super) fn remote_version(address: &str, url: &str) -> Option<u64> {
    url.strip_prefix(address)?
        .strip_prefix("/versions/")?
        .parse()
        .ok()
}

/// Refuses a change to the recipe kept as `slug` (entity `id`) told by
/// anyone but its author there.
fn check_remote_author(
    view: &Snapshot,
    slug: &Slug,
    id: crate::domain::ids::RecipeId,
    author: &str,
) -> Result<(), DomainError> {
    match view.string(id.entity(), view.attrs.remote_author)? {
        Some(kept_by) if kept_by == author => Ok(()),
        _ => Err(DomainError::Invalid(format!(
            "{slug} is kept from its author there, and {author} is not them"
        ))),
    }
}

/// Ann's soup on site A, as the tests of kept recipes and of offers fetch
/// it.
#[cfg(test)]
pub(super) mod fixtures {
    use super::RemoteParent;
    use crate::domain::{Content, ContentDraft, Source};

    pub(in crate::domain::write) const ADDRESS: &str = "https://a.example/recipes/soup";
    pub(in crate::domain::write) const ANN: &str = "https://a.example/cooks/ann";

    /// Ann's soup at `version`, with these ingredients, told by `author`.
    pub(in crate::domain::write) fn soup_by(
        version: u64,
        lines: &[&str],
        author: &str,
    ) -> RemoteParent {
        let draft = ContentDraft {
            title: "Soup".into(),
            ingredients: lines.iter().map(|l| l.to_string()).collect(),
            ..ContentDraft::default()
        };
        RemoteParent {
            address: ADDRESS.into(),
            content: Content::parse(draft).unwrap(),
            source: Source {
                url: format!("{ADDRESS}/versions/{version}"),
                name: "Soup, by @ann@a.example".into(),
            },
            author: author.into(),
            author_inbox: "https://a.example/inbox".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{soup_by, ADDRESS, ANN};
    use super::*;

    fn soup(version: u64, eggs: &str, author: &str) -> RemoteParent {
        soup_by(version, &[eggs], author)
    }

    #[test]
    fn a_kept_recipe_is_numbered_as_on_its_site_and_changed_only_forward_by_its_author() {
        let recipes = Recipes::temporary().unwrap();
        let (slug, version) = recipes.keep_remote(&soup(3, "2 eggs", ANN)).unwrap();
        assert!(slug.is_elsewhere());
        assert_eq!(version.get(), 3);
        let view = recipes.snapshot();
        let kept = view.recipe(&slug).unwrap();
        assert_eq!(kept.version_count, 3);
        assert_eq!(kept.author, None);
        assert_eq!(view.versions(kept.id).unwrap().len(), 3);
        // Told again: nothing written.
        let basis = recipes.snapshot().basis();
        recipes.keep_remote(&soup(3, "2 eggs", ANN)).unwrap();
        assert_eq!(recipes.snapshot().basis(), basis);
        // Version 5, two on: its content is version 5's, and version 4
        // (never fetched) holds version 3's.
        let (_, version) = recipes.keep_remote(&soup(5, "4 eggs", ANN)).unwrap();
        assert_eq!(version.get(), 5);
        let view = recipes.snapshot();
        let versions = view.versions(kept.id).unwrap();
        assert_eq!(versions.len(), 5);
        let at = |n: usize| view.content_at(kept.id, versions[n - 1].basis).unwrap();
        assert_eq!(at(4).ingredients(), ["2 eggs"]);
        assert_eq!(at(5).ingredients(), ["4 eggs"]);
        assert_eq!(
            view.source(kept.id).unwrap().unwrap().url,
            format!("{ADDRESS}/versions/5")
        );
        // An older version, another author, or too many versions: refused,
        // and nothing written.
        let basis = recipes.snapshot().basis();
        for refused in [
            soup(4, "3 eggs", ANN),
            soup(6, "5 eggs", "https://a.example/cooks/mallory"),
            soup(u64::from(MAX_KEPT_VERSIONS) + 1, "5 eggs", ANN),
        ] {
            let error = recipes.keep_remote(&refused).unwrap_err();
            assert!(matches!(error, DomainError::Invalid(_)), "{error}");
        }
        assert_eq!(recipes.snapshot().basis(), basis);
        // Retired by its author: kept, retired, and nothing more changes it.
        assert!(!recipes
            .retire_remote(ADDRESS, "https://a.example/cooks/mallory")
            .is_ok_and(|retired| retired));
        assert!(recipes.retire_remote(ADDRESS, ANN).unwrap());
        assert!(!recipes.retire_remote(ADDRESS, ANN).unwrap());
        let (_, version) = recipes.keep_remote(&soup(9, "9 eggs", ANN)).unwrap();
        assert_eq!(version.get(), 6);
        assert!(recipes.snapshot().recipe(&slug).unwrap().retired);
    }

    #[test]
    fn what_a_remote_site_cannot_make_this_one_keep() {
        let recipes = Recipes::temporary().unwrap();
        let basis = recipes.snapshot().basis();
        // An address not written the one way (it would be no slug at all),
        // a version 0, and more versions than are kept: refused before
        // anything is written.
        let mut shouting = soup(1, "2 eggs", ANN);
        shouting.address = "HTTPS://a.example/recipes/soup".into();
        shouting.source.url = format!("{}/versions/1", shouting.address);
        assert!(matches!(
            recipes.keep_remote(&shouting),
            Err(DomainError::BadSlug(_))
        ));
        for refused in [soup(0, "2 eggs", ANN), soup(251, "2 eggs", ANN)] {
            assert!(matches!(
                recipes.keep_remote(&refused),
                Err(DomainError::Invalid(_))
            ));
        }
        assert_eq!(recipes.snapshot().basis(), basis);
        // Told of versions without their numbers, it counts them, and
        // stops at the most it keeps.
        recipes
            .keep_remote(&soup(MAX_KEPT_VERSIONS.into(), "2 eggs", ANN))
            .unwrap();
        let mut unnumbered = soup(1, "3 eggs", ANN);
        unnumbered.source.url = ADDRESS.into();
        assert!(matches!(
            recipes.keep_remote(&unnumbered),
            Err(DomainError::Invalid(_))
        ));
    }

    #[test]
    fn a_kept_recipe_is_no_recipe_of_this_sites_own() {
        let recipes = Recipes::temporary().unwrap();
        let mut tagged = soup(1, "2 eggs", ANN);
        let mut draft = tagged.content.to_draft();
        draft.tags = vec!["kept-only".into()];
        tagged.content = Content::parse(draft).unwrap();
        recipes.keep_remote(&tagged).unwrap();
        let view = recipes.snapshot();
        assert!(view.tags().unwrap().is_empty());
        assert_eq!(view.own_recipe_count().unwrap(), 0);
        assert_eq!(view.recipe_count(), 1);
    }
}
