//! A recipe read from a page's headings, where it has no schema.org and
//! no plugin's card: the list after an "Ingredients" heading and the
//! steps after a "Method" (or "Instructions", "Directions",
//! "Preparation") heading, in the languages the site stems.

mod lines;
mod words;

use std::sync::LazyLock;

use scraper::{ElementRef, Html, Selector};

use super::element::squeezed;
use super::element::{page_title, selector, text_of, text_within, MAX_ITEMS};
use super::stated_times::stated_times;
use super::Found;
use crate::domain::{ContentDraft, Step};
use lines::{lines_after, lines_of, starts_numbered, unnumbered};
use words::{FOR, INGREDIENTS, METHOD, NOTES};

/// How many headings of one kind are looked after for their list.
const MAX_LOOKS: usize = 3;
/// Whether a heading's text is one of `names`: alone, with a colon after
/// it and nothing more, with something in brackets, or with what it is
/// for ("Ingredients for the sauce"). "Preparation time: 10 min" is not
/// a method's heading.
fn names(heading: &str, names: &[&str]) -> bool {
    // An emoji or a bullet before the words ("🥘 Ingredients") and the
    // word "Recipe" ("Recipe Ingredients") are no part of the name.
    let heading = heading
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .trim()
        .to_lowercase();
    let heading = heading.strip_prefix("recipe ").unwrap_or(&heading);
    names.iter().any(|name| {
        let Some(rest) = heading.strip_prefix(name) else {
            return false;
        };
        // "How to make guacamole".
        if OPEN_ENDED.contains(name) && rest.starts_with(' ') {
            return true;
        }
        // A heading's anchor ("Ingredients #", "Method ¶") is no word of it.
        let rest = rest.trim().trim_end_matches(['#', '¶', '§']).trim();
        rest.is_empty()
            || [":", "-", "–", "—"].contains(&rest)
            || rest.starts_with('(')
            // "Ingredients – makes 12"; "Préparation : 15 min" and
            // "Prep – 10 min" are lines of times, not headings.
            || (rest.starts_with(['–', '—']) || rest.starts_with("- "))
                && !rest
                    .trim_start_matches(['–', '—', '-', ' '])
                    .starts_with(|c: char| c.is_ascii_digit())
            || FOR.iter().any(|word| {
                rest.strip_prefix(word)
                    .is_some_and(|after| after.starts_with(' '))
            })
    })
}

/// Headings that name a part with anything after them.
const OPEN_ENDED: [&str; 3] = ["how to make", "how to cook", "so wird's gemacht"];

/// The page's recipe read from its headings: the items of the first list
/// after an ingredients heading, and of the first list (or the
/// paragraphs) after a method heading; its title the page's `h1`.
pub(super) fn by_headings(page: &Html) -> Option<Found> {
    let headings = selector("h1, h2, h3, h4, h5, h6, strong, b, u, p, span");
    let mut ingredients: Option<Vec<String>> = None;
    let mut steps: Option<Vec<String>> = None;
    // Each look after a heading may walk the rest of the page: a few
    // headings of each kind are looked after, not every one a page has.
    let mut looks = [0; 2];
    let mut found_at: [Option<ElementRef>; 2] = [None, None];
    for heading in page.select(&headings).take(10_000) {
        let done = |part: &Option<Vec<String>>, looks: usize| part.is_some() || looks >= MAX_LOOKS;
        if done(&ingredients, looks[0]) && done(&steps, looks[1]) {
            break;
        }
        // A heading is small: one of many nodes is none, and is read no
        // further than a heading can be long.
        if heading.descendants().nth(MAX_SMALL_NODES).is_some() {
            continue;
        }
        let text = text_within(heading, None, 64);
        if text.len() > 60 {
            continue;
        }
        if ingredients.is_none() && looks[0] < MAX_LOOKS && names(&text, &INGREDIENTS) {
            looks[0] += 1;
            ingredients = part_after(heading, Part::Ingredients);
            found_at[0] = ingredients.is_some().then_some(heading);
        } else if steps.is_none() && looks[1] < MAX_LOOKS && names(&text, &METHOD) {
            looks[1] += 1;
            steps = part_after(heading, Part::Steps);
            found_at[1] = steps.is_some().then_some(heading);
        }
    }
    let (ingredients, steps) = (ingredients.unwrap_or_default(), steps.unwrap_or_default());
    if ingredients.is_empty() && steps.is_empty() {
        return None;
    }
    // The times a post states are in the block that holds its recipe.
    let [prep, cook, total] = recipe_block(found_at).map_or([None; 3], stated_times);
    Some(Found {
        content: ContentDraft {
            title: page_title(page)?,
            prep,
            cook,
            total,
            ingredients,
            steps: steps
                .into_iter()
                .map(|text| Step {
                    section: None,
                    text,
                })
                .collect(),
            ..ContentDraft::default()
        },
        site_name: None,
    })
}

/// The block that holds a recipe's two headings (the post's body): the
/// nearest element above both, or above the one found.
fn recipe_block<'a>(headings: [Option<ElementRef<'a>>; 2]) -> Option<ElementRef<'a>> {
    let above = |e: ElementRef<'a>| e.ancestors().filter_map(ElementRef::wrap);
    match headings {
        [Some(a), Some(b)] => above(a).find(|block| above(b).any(|other| other.id() == block.id())),
        [Some(one), None] | [None, Some(one)] => above(one).next(),
        [None, None] => None,
    }
}

/// Which part of a recipe a heading opens.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Part {
    Ingredients,
    Steps,
}

/// A heading's rank: 1 for `h1` to 6 for `h6`, and 7 for words made a
/// heading by bold type (`<p><strong>Ingredients</strong></p>`).
fn rank_of(element: ElementRef) -> u8 {
    match element.value().name() {
        "h1" => 1,
        "h2" => 2,
        "h3" => 3,
        "h4" => 4,
        "h5" => 5,
        "h6" => 6,
        _ => 7,
    }
}

fn is_list(element: ElementRef) -> bool {
    matches!(element.value().name(), "ul" | "ol")
}

/// Whether `element` heads a group of the part a heading of rank `rank`
/// opened ("For the dough" over its own list): short, of a lower rank
/// (or bold words under bold words), naming no part of its own, and
/// followed at once by a list.
fn heads_a_group(element: ElementRef, rank: u8, part: Part) -> bool {
    let own_rank = rank_of(element);
    if own_rank <= rank && own_rank != 7 {
        return false;
    }
    // Bold words, or a short line ending in a colon ("For the cake:").
    let is_label = |p: ElementRef| is_bold_label(p) || is_group_label(&text_within(p, None, 64));
    if own_rank == 7 && (element.value().name() != "p" || !is_label(element)) {
        return false;
    }
    let text = text_within(element, None, 64);
    let other = match part {
        Part::Ingredients => &METHOD[..],
        Part::Steps => &INGREDIENTS[..],
    };
    !text.is_empty()
        && text.len() <= 60
        && !names(&text, other)
        && !names(&text, &NOTES)
        && !is_another_section(&text)
        && element
            .next_siblings()
            .filter_map(ElementRef::wrap)
            .next()
            .is_some_and(|next| {
                // Bold words head a list; a heading, a list or paragraphs.
                is_list(next) || (own_rank < 7 && next.value().name() == "p")
            })
}

/// The part that follows `heading` in the page, before the next heading:
/// the items of its lists (several where groups have headings of their
/// own), else its paragraphs' lines (a line each where `<br>`s part
/// them). Paragraphs are read only beside the heading itself; a list may
/// be after the block that holds it (a heading wrapped in a div).
/// Anything that holds a heading of its own (the comments, the next
/// section) ends the look.
fn list_after(heading: ElementRef, part: Part) -> Option<Vec<String>> {
    let headings = selector("h1, h2, h3, h4, h5, h6");
    let lists = selector("ul, ol");
    let rank = rank_of(heading);
    let mut listed: Vec<String> = Vec::new();
    let mut lines = Lines::of(part);
    let found = |texts: Vec<String>| (!texts.is_empty()).then_some(texts);
    let mut at = Some(heading);
    // A part is near its heading: a look walks so many elements at most,
    // and a page of a million labels costs no more than a long recipe.
    let mut walk = 0;
    while let Some(here) = at {
        for sibling in here.next_siblings().filter_map(ElementRef::wrap) {
            walk += 1;
            if walk > MAX_WALK {
                return found(if listed.is_empty() {
                    lines.done()
                } else {
                    listed
                });
            }
            let name = sibling.value().name();
            // Past the first list, only a group's heading and the next
            // list carry the part on: anything else ends it.
            if !listed.is_empty() {
                if is_list(sibling) && listed.len() < MAX_ITEMS {
                    listed.extend(items_of(sibling));
                    continue;
                }
                if heads_a_group(sibling, rank, part) || text_of(sibling).is_empty() {
                    continue;
                }
                return found(listed);
            }
            let is_heading = matches!(name, "h1" | "h2" | "h3" | "h4" | "h5" | "h6");
            if heads_a_group(sibling, rank, part) {
                continue;
            }
            // A list is read whole, steps' headings ("Step 1") and all.
            let holds_heading = !is_list(sibling) && sibling.select(&headings).next().is_some();
            if is_heading || holds_heading {
                return found(lines.done());
            }
            let list = match name {
                "ul" | "ol" | "table" => Some(sibling),
                _ => sibling.select(&lists).next(),
            };
            // A list after a line of times or an introduction is the part.
            if let Some(list) = list.filter(|_| lines.is_a_preamble()) {
                listed = items_of(list);
                if !listed.is_empty() && !is_list(sibling) {
                    // A list inside a block: the block is the part.
                    return Some(listed);
                }
                continue;
            }
            let is_line = name == "p" || is_line_div(sibling);
            if is_line && (lines.is_full() || names_a_part(sibling) || !lines.takes(sibling)) {
                return found(lines.done());
            }
        }
        if !listed.is_empty() {
            return Some(listed);
        }
        if !lines.texts.is_empty() {
            return Some(lines.done());
        }
        at = here.parent().and_then(ElementRef::wrap);
        if at.is_some_and(|a| matches!(a.value().name(), "body" | "html")) {
            break;
        }
    }
    None
}

/// The most elements one look after a heading walks.
const MAX_WALK: usize = 4 * MAX_ITEMS;

/// A list's items (its own, not those of a list in an item: a step's
/// tips are its text), or a table's rows (amount and name in their cells;
/// a row of headers is none).
fn items_of(list: ElementRef) -> Vec<String> {
    let rows = selector("tr");
    let header = selector("th");
    let cells = selector("td");
    let items: Vec<ElementRef> = match list.value().name() {
        "table" => list
            .select(&rows)
            .filter(|row| {
                row.select(&cells).next().is_some() || row.select(&header).next().is_none()
            })
            .take(MAX_ITEMS)
            .collect(),
        _ => list
            .children()
            .filter_map(ElementRef::wrap)
            .filter(|child| child.value().name() == "li")
            .take(MAX_ITEMS)
            .collect(),
    };
    items
        .into_iter()
        .map(text_of)
        .filter(|t| !t.is_empty())
        .collect()
}

/// A part's lines read from paragraphs (or Blogger's line `div`s), one
/// kind of element throughout.
struct Lines {
    part: Part,
    texts: Vec<String>,
    /// The element the lines are in: the part's paragraphs are of one
    /// kind, and a sign-off in another ends them.
    kind: Option<String>,
}

impl Lines {
    fn of(part: Part) -> Lines {
        Lines {
            part,
            texts: Vec::new(),
            kind: None,
        }
    }

    /// Takes the paragraph's lines, or says the part ended at it: at a
    /// paragraph of another kind, or where numbered lines stop being
    /// numbered. Labels, links and empty paragraphs are passed over.
    fn takes(&mut self, paragraph: ElementRef) -> bool {
        if is_bold_label(paragraph) || is_navigation(paragraph) {
            return true;
        }
        let lines = lines_of(paragraph);
        if lines.is_empty() {
            return true;
        }
        let kind = paragraph.value().name();
        if self.kind.as_deref().is_some_and(|k| k != kind) {
            return false;
        }
        let numbered = |lines: &[String]| lines.first().is_some_and(|l| starts_numbered(l));
        if self.part == Part::Steps && numbered(&self.texts) && !numbered(&lines) {
            return false;
        }
        self.kind = Some(kind.to_owned());
        self.texts.extend(lines);
        true
    }

    /// Whether the part has as many lines as one is read with.
    fn is_full(&self) -> bool {
        self.texts.len() >= MAX_ITEMS
    }

    /// Whether the lines so far are at most a line of times or an
    /// introduction, which a list after them replaces.
    fn is_a_preamble(&self) -> bool {
        self.texts.len() <= 2 && self.texts.iter().all(|t| t.chars().count() <= 160)
    }

    /// The part's lines: steps without their numbers; ingredients without
    /// their groups' labels ("For the dough:"), and as written ("1.5 kg
    /// beef" keeps its number).
    fn done(&mut self) -> Vec<String> {
        let texts = std::mem::take(&mut self.texts);
        match self.part {
            Part::Steps => unnumbered(texts),
            Part::Ingredients => texts
                .into_iter()
                .filter(|line| !is_group_label(line))
                .collect(),
        }
    }
}

/// The part after `heading`: the lines that follow it in its own block
/// where it is bold words in running text (`<b>Method:</b><br>1. ...`),
/// else the lists or paragraphs after it.
fn part_after(heading: ElementRef, part: Part) -> Option<Vec<String>> {
    let inline = matches!(heading.value().name(), "b" | "strong" | "span" | "u");
    if !inline {
        return list_after(heading, part);
    }
    // A span in no bold type heads only the `<br>` lines after it
    // (Blogger's "<span>Składniki:</span><br>- ..."): spans are
    // everywhere, in menus and contents too.
    let bold = heading.value().name() != "span"
        || heading
            .value()
            .attr("style")
            .is_some_and(|s| s.contains("bold"));
    // Bold words inside a sentence ("... for the full <b>ingredients</b>")
    // head nothing: a heading starts its line.
    let starts_its_line = heading
        .prev_siblings()
        .take_while(|node| node.value().as_element().is_none_or(|e| e.name() != "br"))
        .all(|node| {
            node.value()
                .as_text()
                .is_none_or(|text| text.trim().is_empty())
        });
    if !starts_its_line {
        return None;
    }
    // Bold words with more on their line label it ("Preparation: 25
    // min"); they head nothing, unless the line is still the heading's
    // words ("<u>Ingrédients</u> (pour 8 parts) :").
    let next = heading.next_siblings().find(|node| {
        node.value()
            .as_text()
            .is_none_or(|text| !text.trim().is_empty())
    });
    match next.map(|node| node.value()) {
        Some(scraper::Node::Text(text)) => {
            let line = format!("{} {}", text_within(heading, None, 64), &**text);
            let heads = [&INGREDIENTS[..], &METHOD].iter().any(|n| names(&line, n));
            (heads && bold).then(|| list_after(heading, part)).flatten()
        }
        Some(scraper::Node::Element(e)) if e.name() == "br" => {
            lines_after(heading, part).or_else(|| bold.then(|| list_after(heading, part)).flatten())
        }
        _ if bold => list_after(heading, part),
        _ => None,
    }
}

/// The most nodes looked at in a paragraph to judge it a label or a
/// line of links: either is small, and a page of huge paragraphs costs no
/// more than a long recipe.
const MAX_SMALL_NODES: usize = 256;

/// Words of the sections that follow a recipe's parts on a blog's page:
/// a heading that holds one ends the part, whatever list follows it.
const OTHER_SECTIONS: [&str; 22] = [
    "note",
    "tip",
    "nutrition",
    "equipment",
    "you might",
    "you may also",
    "also like",
    "related",
    "more recipes",
    "storage",
    "storing",
    "how to store",
    "to store",
    "serving suggestion",
    "faq",
    "video",
    "share",
    "comment",
    "review",
    "substitution",
    "variation",
    "make ahead",
];

/// Whether a heading names a section of the page other than a recipe's
/// part ("Recipe Notes", "Nutrition", "You might also like").
fn is_another_section(heading: &str) -> bool {
    let heading = heading.to_lowercase();
    OTHER_SECTIONS.iter().any(|words| heading.contains(words))
}

/// Selectors asked of every paragraph a part's look passes, parsed once.
static EMPHASIS: LazyLock<Selector> = LazyLock::new(|| selector("strong, b, em, i, u"));
static CONTROLS: LazyLock<Selector> = LazyLock::new(|| selector("a, button"));

/// Whether a paragraph is bold (or emphasised) words alone, short: the
/// name of a group of steps or ingredients ("The filling"), not one.
fn is_bold_label(paragraph: ElementRef) -> bool {
    // A label is small: a paragraph of many nodes is none.
    if paragraph.descendants().nth(MAX_SMALL_NODES).is_some() {
        return false;
    }
    let text = text_within(paragraph, None, 64);
    if text.is_empty() || text.len() > 60 {
        return false;
    }
    let bold: String = paragraph
        .select(&EMPHASIS)
        .map(|b| text_within(b, None, 64))
        .collect::<Vec<_>>()
        .join(" ");
    squeezed(&bold) == text
}

/// Whether a paragraph is the page's own controls and links ("Print this
/// recipe", "Back to all recipes"): no text outside links and buttons.
fn is_navigation(paragraph: ElementRef) -> bool {
    let has_controls = paragraph.select(&CONTROLS).next().is_some();
    // A line of links is small: one of more nodes is no navigation.
    has_controls
        && paragraph.descendants().nth(MAX_SMALL_NODES).is_none()
        && paragraph
            .descendants()
            .all(|node| match node.value().as_text() {
                None => true,
                Some(text) => {
                    text.chars().all(|c| !c.is_alphanumeric())
                        || node.ancestors().any(|a| {
                            a.value()
                                .as_element()
                                .is_some_and(|e| matches!(e.name(), "a" | "button"))
                        })
                }
            })
}

/// Whether a `div` is a line of text, as editors that write no
/// paragraphs (Blogger's) make each line: no block inside it.
fn is_line_div(element: ElementRef) -> bool {
    element.value().name() == "div"
        && element.descendants().take(64).all(|node| {
            node.value().as_element().is_none_or(|e| {
                !matches!(
                    e.name(),
                    "div"
                        | "p"
                        | "ul"
                        | "ol"
                        | "table"
                        | "section"
                        | "article"
                        | "form"
                        | "hr"
                        | "h1"
                        | "h2"
                        | "h3"
                        | "h4"
                        | "h5"
                        | "h6"
                        | "blockquote"
                        | "figure"
                        | "nav"
                        | "header"
                        | "footer"
                        | "aside"
                )
            }) || node.id() == element.id()
        })
}

/// Whether a paragraph is a part's heading in bold words ("Method:").
fn names_a_part(paragraph: ElementRef) -> bool {
    // A paragraph that opens with a part's bold words ("<b>Method:</b><br>
    // 1. ...") begins that part.
    let opening = paragraph
        .children()
        .find(|node| node.value().as_text().is_none_or(|t| !t.trim().is_empty()))
        .and_then(ElementRef::wrap)
        .filter(|e| matches!(e.value().name(), "b" | "strong" | "span" | "u"));
    heads_a_part(&text_within(opening.unwrap_or(paragraph), None, 64))
}

/// Whether short words head a part of a recipe, or its notes.
pub(super) fn heads_a_part(text: &str) -> bool {
    text.len() <= 60
        && [&INGREDIENTS[..], &METHOD, &NOTES]
            .iter()
            .any(|n| names(text, n))
}

/// Whether a line is a group's label ("For the dough:"): short, and
/// ending in a colon.
pub(super) fn is_group_label(line: &str) -> bool {
    line.ends_with(':') && line.chars().count() <= 40
}
