//! Suggestions: a fork's changes proposed to its parent's author, read on
//! one value.

use super::{MergeBase, Recipe, Snapshot};
use crate::domain::ids::{Basis, Instant, RecipeId, VersionNumber};
use crate::domain::merge::{self, Merge};
use crate::domain::Content;
use crate::domain::DomainError;
use crate::store::{Components, Datom, EntityId, Index};

/// Where a suggestion stands; decided in the writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuggestionState {
    Open,
    Accepted,
    Declined,
    Withdrawn,
    /// The recipe it was made to was retired while it was open.
    Closed,
}

impl SuggestionState {
    pub fn as_str(self) -> &'static str {
        match self {
            SuggestionState::Open => "open",
            SuggestionState::Accepted => "accepted",
            SuggestionState::Declined => "declined",
            SuggestionState::Withdrawn => "withdrawn",
            SuggestionState::Closed => "closed",
        }
    }

    fn parse(text: &str) -> SuggestionState {
        match text {
            "accepted" => SuggestionState::Accepted,
            "declined" => SuggestionState::Declined,
            "withdrawn" => SuggestionState::Withdrawn,
            "closed" => SuggestionState::Closed,
            _ => SuggestionState::Open,
        }
    }
}

/// One suggestion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    pub id: EntityId,
    /// Its number among the parent's suggestions: its address.
    pub number: u32,
    pub from: RecipeId,
    /// The fork's version suggested (its newest while open).
    pub from_version: VersionNumber,
    pub to: RecipeId,
    /// The parent's version the fork last agreed with: the merge's base.
    pub base_version: VersionNumber,
    /// When the fork last agreed with the parent through an earlier
    /// suggestion the parent took beside changes of its own: that
    /// suggestion's fork version, on the base as it was suggested
    /// (`read::MergeBase`).
    pub base_fork_version: Option<VersionNumber>,
    pub by: Option<String>,
    pub message: String,
    pub state: SuggestionState,
    pub reply: Option<String>,
    /// The parent's version accepting it made.
    pub accepted_in: Option<VersionNumber>,
    /// Once accepted: whether the parent had no change of its own beside
    /// it, so that the fork is in step with the version that took it
    /// (`None` where a store did not record it).
    pub whole: Option<bool>,
    /// Once accepted: how many of the changes both made differently the
    /// author kept their own version of (`None` where a store did not
    /// record it).
    pub kept_own: Option<u32>,
    /// When it was made.
    pub made: Instant,
    /// When it last changed: made, followed the fork, or closed.
    pub changed: Instant,
}

/// A suggestion its parent took: which, the fork's version suggested,
/// the parent's version it was made against, and the parent's version
/// that took it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Taken {
    pub number: u32,
    pub fork_version: VersionNumber,
    pub base_version: VersionNumber,
    pub parent_version: VersionNumber,
    /// `Suggestion::whole`.
    pub whole: Option<bool>,
    /// `Suggestion::kept_own`.
    pub kept_own: Option<u32>,
}

impl Taken {
    /// Whether the parent took it with no change of its own beside, so
    /// that its version that took it is the fork's changes and nothing
    /// else, and the fork is in step with it. Where a store did not record
    /// it, when the version that took it came right after the one the
    /// suggestion was made against.
    pub fn is_whole(&self) -> bool {
        self.whole
            .unwrap_or(self.base_version.next() == Some(self.parent_version))
    }

    /// Whether the author took every change it made (settled each
    /// conflict for it): only then does the fork's next merge start from
    /// what it sent. Where they kept their own version of some, the fork
    /// merges from where it last agreed, and is asked about those.
    pub fn took_all(&self) -> bool {
        self.kept_own.unwrap_or(0) == 0
    }
}

/// A suggestion's merge, and what it is made of.
#[derive(Debug, Clone)]
pub struct SuggestionMerge {
    /// The fork, as it is now.
    pub fork: Recipe,
    /// The parent's version the fork agreed with, and the fork's version
    /// suggested.
    pub base: Content,
    pub suggested: Content,
    /// The fork's version suggested, as its transaction.
    pub suggested_at: Basis,
    /// The parent's newest version ("mine") with the suggestion ("theirs").
    pub merge: Merge,
}

impl Snapshot {
    /// Suggestion entity `id` as this value has it.
    pub(crate) fn suggestion_by_id(&self, id: EntityId) -> Result<Suggestion, DomainError> {
        let a = &self.attrs;
        let mut s = Suggestion {
            id,
            number: 0,
            from: RecipeId::new(0),
            from_version: VersionNumber::FIRST,
            to: RecipeId::new(0),
            base_version: VersionNumber::FIRST,
            base_fork_version: None,
            by: None,
            message: String::new(),
            state: SuggestionState::Open,
            reply: None,
            accepted_in: None,
            whole: None,
            kept_own: None,
            made: Instant::from_millis(0),
            changed: Instant::from_millis(0),
        };
        let version = |v: &crate::store::Value| v.as_long().and_then(VersionNumber::stored);
        let (mut first_tx, mut last_tx) = (None, None);
        for datom in self
            .db
            .entity_attributes(id, a.suggestion_from, a.suggestion_kept_own)
        {
            let Datom { a: attr, v, tx, .. } = datom?;
            first_tx = Some(first_tx.map_or(tx, |t: EntityId| t.min(tx)));
            last_tx = Some(last_tx.map_or(tx, |t: EntityId| t.max(tx)));
            match attr {
                x if x == a.suggestion_from => s.from = RecipeId::new(v.as_ref().unwrap_or(0)),
                x if x == a.suggestion_to => s.to = RecipeId::new(v.as_ref().unwrap_or(0)),
                x if x == a.suggestion_from_version => {
                    s.from_version = version(&v).unwrap_or(VersionNumber::FIRST)
                }
                x if x == a.suggestion_base_version => {
                    s.base_version = version(&v).unwrap_or(VersionNumber::FIRST)
                }
                x if x == a.suggestion_number => {
                    s.number = v.as_long().and_then(|n| u32::try_from(n).ok()).unwrap_or(0)
                }
                x if x == a.suggestion_by => {
                    s.by = match v.as_ref() {
                        Some(user) => self.handle(user)?,
                        None => None,
                    }
                }
                x if x == a.suggestion_message => {
                    s.message = v.as_str().unwrap_or_default().to_owned()
                }
                x if x == a.suggestion_state => {
                    s.state = SuggestionState::parse(v.as_str().unwrap_or_default())
                }
                x if x == a.suggestion_reply => s.reply = v.as_str().map(str::to_owned),
                x if x == a.suggestion_accepted_in => s.accepted_in = version(&v),
                x if x == a.suggestion_base_fork_version => s.base_fork_version = version(&v),
                x if x == a.suggestion_whole => s.whole = v.as_bool(),
                x if x == a.suggestion_kept_own => {
                    s.kept_own = v.as_long().and_then(|n| u32::try_from(n).ok())
                }
                _ => {}
            }
        }
        let Some(tx) = first_tx else {
            return Err(DomainError::NoSuchRecipe(format!("suggestion #{id}")));
        };
        if s.by.is_none() {
            // Offered from another site: by its cook there.
            s.by = self.string(id, a.suggestion_remote_by)?;
        }
        s.made = Instant::from_millis(self.db.tx_instant(tx)?.unwrap_or(0));
        s.changed = match last_tx {
            Some(last) if last != tx => {
                Instant::from_millis(self.db.tx_instant(last)?.unwrap_or(0))
            }
            _ => s.made,
        };
        Ok(s)
    }

    /// Every suggestion made to recipe `id`, by number (from VAET: one
    /// read, then one per suggestion).
    pub fn suggestions_to(&self, id: RecipeId) -> Result<Vec<Suggestion>, DomainError> {
        self.suggestions_referring(self.attrs.suggestion_to, id.entity())
    }

    /// Every suggestion made from fork `id`.
    pub fn suggestions_from(&self, id: RecipeId) -> Result<Vec<Suggestion>, DomainError> {
        self.suggestions_referring(self.attrs.suggestion_from, id.entity())
    }

    /// Every suggestion the cook with `handle` made.
    pub fn suggestions_by(
        &self,
        handle: &crate::domain::Slug,
    ) -> Result<Vec<Suggestion>, DomainError> {
        match self.user(handle)? {
            Some(user) => self.suggestions_referring(self.attrs.suggestion_by, user),
            None => Ok(Vec::new()),
        }
    }

    /// The newest `limit` suggestions (by when they were made) sent to
    /// the recipes of the cook with `handle`, and how many there are in
    /// all: one read of their ids, whatever the number of the cook's
    /// recipes, then one per suggestion returned.
    pub fn suggestions_to_cook(
        &self,
        handle: &crate::domain::Slug,
        limit: usize,
    ) -> Result<(Vec<Suggestion>, usize), DomainError> {
        match self.user(handle)? {
            Some(user) => self.newest_referring(self.attrs.suggestion_to_author, user, limit),
            None => Ok((Vec::new(), 0)),
        }
    }

    /// The newest `limit` suggestions made to recipe `id` before number
    /// `before` (of all when `None`), newest first, and how many there are
    /// in all: one read of their ids, then one per suggestion returned.
    /// Numbers are given in the order suggestions are made, as entity ids
    /// are, so suggestion `n` is the `n`th of VAET's list.
    pub fn suggestions_to_page(
        &self,
        id: RecipeId,
        before: Option<u32>,
        limit: usize,
    ) -> Result<(Vec<Suggestion>, usize), DomainError> {
        let ids = self.db.referrers(self.attrs.suggestion_to, id.entity())?;
        let end = before.map_or(ids.len(), |b| (b as usize).saturating_sub(1).min(ids.len()));
        let start = end.saturating_sub(limit);
        let mut out = ids[start..end]
            .iter()
            .map(|&s| self.suggestion_by_id(s))
            .collect::<Result<Vec<_>, _>>()?;
        out.sort_by_key(|s| std::cmp::Reverse(s.number));
        Ok((out, ids.len()))
    }

    /// The newest `limit` suggestions made to recipe `id` (newest first),
    /// and how many there are in all: read as `suggestions_to_cook` is.
    pub fn newest_suggestions_to(
        &self,
        id: RecipeId,
        limit: usize,
    ) -> Result<(Vec<Suggestion>, usize), DomainError> {
        self.newest_referring(self.attrs.suggestion_to, id.entity(), limit)
    }

    /// The newest `limit` suggestions the cook with `handle` made, and how
    /// many there are in all; read as `suggestions_to_cook` is.
    pub fn suggestions_by_cook(
        &self,
        handle: &crate::domain::Slug,
        limit: usize,
    ) -> Result<(Vec<Suggestion>, usize), DomainError> {
        match self.user(handle)? {
            Some(user) => self.newest_referring(self.attrs.suggestion_by, user, limit),
            None => Ok((Vec::new(), 0)),
        }
    }

    /// The newest `limit` suggestions fork `id` made (newest first), and
    /// how many it made.
    pub fn newest_suggestions_from(
        &self,
        id: RecipeId,
        limit: usize,
    ) -> Result<(Vec<Suggestion>, usize), DomainError> {
        self.newest_referring(self.attrs.suggestion_from, id.entity(), limit)
    }

    /// Entity ids are given in the order entities are made, so the newest
    /// suggestions referring to `target` are the last `limit` of VAET's
    /// list.
    fn newest_referring(
        &self,
        attr: EntityId,
        target: EntityId,
        limit: usize,
    ) -> Result<(Vec<Suggestion>, usize), DomainError> {
        let ids = self.db.referrers(attr, target)?;
        let newest = &ids[ids.len().saturating_sub(limit)..];
        let mut out = newest
            .iter()
            .map(|&s| self.suggestion_by_id(s))
            .collect::<Result<Vec<_>, _>>()?;
        out.sort_by_key(|s| std::cmp::Reverse((s.made, s.id)));
        Ok((out, ids.len()))
    }

    /// The suggestions of fork `id` its parent took, oldest first: the
    /// fork's version suggested and the parent's version that took it.
    pub fn taken_from(&self, id: RecipeId) -> Result<Vec<Taken>, DomainError> {
        Ok(self
            .suggestions_from(id)?
            .into_iter()
            .filter(|s| s.state == SuggestionState::Accepted)
            .filter_map(|s| {
                s.accepted_in.map(|parent_version| Taken {
                    number: s.number,
                    fork_version: s.from_version,
                    base_version: s.base_version,
                    parent_version,
                    whole: s.whole,
                    kept_own: s.kept_own,
                })
            })
            .collect())
    }

    fn suggestions_referring(
        &self,
        attr: EntityId,
        target: EntityId,
    ) -> Result<Vec<Suggestion>, DomainError> {
        let mut out = self
            .db
            .referrers(attr, target)?
            .iter()
            .map(|&s| self.suggestion_by_id(s))
            .collect::<Result<Vec<_>, _>>()?;
        out.sort_by_key(|s| (s.made, s.number));
        Ok(out)
    }

    /// Suggestion `number` to recipe `id`: numbers are given in the order
    /// suggestions are made, as entity ids are, so it is the `number`th of
    /// VAET's list, read alone; a store where that does not hold (none
    /// made here does) is searched through. None is numbered past how many
    /// there are.
    pub fn suggestion(&self, id: RecipeId, number: u32) -> Result<Option<Suggestion>, DomainError> {
        let ids = self.db.referrers(self.attrs.suggestion_to, id.entity())?;
        let nth = usize::try_from(number)
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| ids.get(i));
        let Some(&s) = nth else {
            // Numbered from 1 by how many were made before: none is past
            // the count.
            return Ok(None);
        };
        let suggestion = self.suggestion_by_id(s)?;
        if suggestion.number == number {
            return Ok(Some(suggestion));
        }
        Ok(self
            .suggestions_to(id)?
            .into_iter()
            .find(|s| s.number == number))
    }

    /// What accepting `suggestion` to `parent` (as this value has it)
    /// merges: the fork's changes, from the base it agreed with to the
    /// fork's version suggested, onto the parent's newest; all but its
    /// title and picture.
    /// Reads the three versions: the cost of the two recipes.
    pub fn suggestion_merge(
        &self,
        parent: &Recipe,
        suggestion: &Suggestion,
    ) -> Result<SuggestionMerge, DomainError> {
        let fork = self.recipe_by_id(suggestion.from)?;
        let base = self.base_content(
            parent,
            &fork,
            MergeBase {
                parent_version: suggestion.base_version,
                fork_version: suggestion.base_fork_version,
            },
        )?;
        let fork_versions = self.versions(fork.id)?;
        let from_at = Snapshot::nth_version(&fork.slug, &fork_versions, suggestion.from_version)?;
        let suggested = merge::as_suggested(&base, &self.content_at(fork.id, from_at.basis)?);
        let merge = merge::merge(&base, &parent.content, &suggested);
        Ok(SuggestionMerge {
            fork,
            base,
            suggested,
            suggested_at: from_at.basis,
            merge,
        })
    }

    /// The suggestion of `fork` its parent's author already answered for
    /// the very changes the fork would send now: declined, or taken in
    /// part (the author kept their own side of a conflict). The same: the
    /// version answered is the fork's newest, or the fork's recipe is
    /// that version's again (it changed and changed back), or the
    /// changes that version sent, made on the fork's merge base now
    /// (`base`, the parent's version `parent` it agrees with since; it
    /// brought in a change of the parent's), are what it would send. The
    /// same changes are not asked again until the fork changes its own.
    /// Reads past versions only of suggestions so answered, newest first,
    /// of `made` (the fork's suggestions, if read already) or all.
    pub fn answered_already(
        &self,
        fork: &Recipe,
        made: Option<&[Suggestion]>,
        (parent, base): (&Recipe, &Content),
    ) -> Result<Option<Suggestion>, DomainError> {
        let read;
        let made = match made {
            Some(made) => made,
            None => {
                read = self.suggestions_from(fork.id)?;
                &read
            }
        };
        let said = |s: &&Suggestion| match s.state {
            SuggestionState::Declined => true,
            SuggestionState::Accepted => s.kept_own.unwrap_or(0) > 0 && s.whole != Some(true),
            _ => false,
        };
        let mut versions = None;
        let sent = merge::as_suggested(base, &fork.content);
        for s in made.iter().rev().filter(said) {
            if s.from_version == fork.newest() {
                return Ok(Some(s.clone()));
            }
            if versions.is_none() {
                versions = Some(self.versions(fork.id)?);
            }
            let versions = versions.as_deref().unwrap_or_default();
            let at = Snapshot::nth_version(&fork.slug, versions, s.from_version)?;
            let then = self.content_at(fork.id, at.basis)?;
            // Its title and picture are never sent: a fork that changed
            // only those sends the same changes.
            if merge::as_suggested(&fork.content, &then) == fork.content {
                return Ok(Some(s.clone()));
            }
            let base_then = self.base_content(
                parent,
                fork,
                MergeBase {
                    parent_version: s.base_version,
                    fork_version: s.base_fork_version,
                },
            )?;
            let sent_then = merge::as_suggested(&base_then, &then);
            let on_base_now = merge::merge(&base_then, base, &sent_then).clean();
            if on_base_now.is_some_and(|now| now == sent) {
                return Ok(Some(s.clone()));
            }
        }
        Ok(None)
    }

    /// How many suggestions to recipe `id` are open: one VAET read of
    /// `:suggestion/open-to`, however many it has had.
    pub fn open_suggestions(&self, id: RecipeId) -> Result<usize, DomainError> {
        Ok(self
            .db
            .referrers(self.attrs.suggestion_open_to, id.entity())?
            .len())
    }

    /// The suggestions recipe `id` took, each with the transaction of its
    /// version that took it, oldest first: one read of
    /// `:recipe/took-suggestion`'s history.
    pub fn taken_by(&self, id: RecipeId) -> Result<Vec<(EntityId, EntityId)>, DomainError> {
        let mut out = Vec::new();
        for datom in self.db.history().datoms(
            Index::Eavt,
            &Components::any()
                .e(id.entity())
                .a(self.attrs.took_suggestion),
        ) {
            let datom = datom?;
            if let (true, Some(suggestion)) = (datom.added, datom.v.as_ref()) {
                out.push((datom.tx, suggestion));
            }
        }
        Ok(out)
    }
}
