//! The merge's cases as a table. Each is named, with its three versions
//! (the base both sides last agreed on, mine and theirs), how many changes
//! the cook is asked about, the choices made, and the result. Where the
//! part merged is text a cook reads line by line, the same three files go
//! through `git merge-file`, whose output is written down here too, with
//! why forkful's merge differs from it where it does. git ships with every
//! machine that can clone this repository, and the test runs it: a case
//! whose recorded git output is wrong fails.

use std::process::Command;

use forkful::domain::merge::{self, Choice};
use forkful::domain::{content, Content, ContentDraft, Minutes, Yield};

/// Which part of a recipe a case merges, and so how its lines are read
/// and written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Ingredients,
    /// The method as the form writes it: a step a line, `## Name` where a
    /// section starts.
    Method,
    /// The notes, a paragraph a line (git's file puts a blank line
    /// between them, as the form does).
    Notes,
    Title,
    /// Cooking minutes.
    Cook,
    Servings,
    /// The tags; git's file is the one line the form shows them on.
    Tags,
    /// The servings first, then the ingredient lines.
    ServedIngredients,
}

struct Case {
    name: &'static str,
    part: Part,
    base: &'static [&'static str],
    mine: &'static [&'static str],
    theirs: &'static [&'static str],
    /// How many changes the cook is asked to settle.
    asked: usize,
    choices: &'static [Pick],
    expected: &'static [&'static str],
    /// `git merge-file -p` of the three, labelled `yours`, `base` and
    /// `theirs`; with a conflict, the markers are in it.
    git: &'static str,
    /// Where forkful's result is not git's (with the same choice), why.
    differs: Option<&'static str>,
}

/// A choice, as a table can hold it.
#[derive(Debug, Clone, Copy)]
enum Pick {
    Mine,
    Theirs,
    Both,
    Edited(&'static str),
}

impl Pick {
    fn choice(self) -> Choice {
        match self {
            Pick::Mine => Choice::Mine,
            Pick::Theirs => Choice::Theirs,
            Pick::Both => Choice::Both,
            Pick::Edited(text) => Choice::Edited(text.to_owned()),
        }
    }
}

const CASES: &[Case] = &[
    Case {
        name: "one side edits",
        part: Part::Ingredients,
        base: &["2 carrots", "1 onion", "salt"],
        mine: &["2 carrots", "1 onion", "salt"],
        theirs: &["3 carrots", "1 onion", "salt"],
        asked: 0,
        choices: &[],
        expected: &["3 carrots", "1 onion", "salt"],
        git: "3 carrots\n1 onion\nsalt\n",
        differs: None,
    },
    Case {
        name: "neighbouring lines",
        part: Part::Ingredients,
        base: &["2 carrots", "1 onion", "salt"],
        mine: &["2 carrots", "1 red onion", "salt"],
        theirs: &["2 carrots", "1 onion", "sea salt"],
        asked: 0,
        choices: &[],
        expected: &["2 carrots", "1 red onion", "sea salt"],
        git: "2 carrots\n<<<<<<< yours\n1 red onion\nsalt\n=======\n1 onion\nsea salt\n>>>>>>> theirs\n",
        differs: Some("git takes changes to lines that touch as one conflict; forkful merges changes that only meet at an edge, since each side changed a different line"),
    },
    Case {
        name: "the same edit on both sides",
        part: Part::Ingredients,
        base: &["2 carrots", "1 onion"],
        mine: &["2 carrots", "1 red onion"],
        theirs: &["2 carrots", "1 red onion"],
        asked: 0,
        choices: &[],
        expected: &["2 carrots", "1 red onion"],
        git: "2 carrots\n1 red onion\n",
        differs: None,
    },
    Case {
        name: "the same line edited differently",
        part: Part::Ingredients,
        base: &["2 carrots", "1 onion", "salt"],
        mine: &["2 carrots", "1 red onion", "salt"],
        theirs: &["2 carrots", "2 onions", "salt"],
        asked: 1,
        choices: &[Pick::Theirs],
        expected: &["2 carrots", "2 onions", "salt"],
        git: "2 carrots\n<<<<<<< yours\n1 red onion\n=======\n2 onions\n>>>>>>> theirs\nsalt\n",
        differs: None,
    },
    Case {
        name: "edit against delete",
        part: Part::Ingredients,
        base: &["2 carrots", "1 onion", "salt"],
        mine: &["2 carrots", "1 red onion", "salt"],
        theirs: &["2 carrots", "salt"],
        asked: 1,
        choices: &[Pick::Mine],
        expected: &["2 carrots", "1 red onion", "salt"],
        git: "2 carrots\n<<<<<<< yours\n1 red onion\n=======\n>>>>>>> theirs\nsalt\n",
        differs: None,
    },
    Case {
        name: "both delete",
        part: Part::Ingredients,
        base: &["2 carrots", "1 onion", "salt"],
        mine: &["2 carrots", "salt"],
        theirs: &["2 carrots", "salt"],
        asked: 0,
        choices: &[],
        expected: &["2 carrots", "salt"],
        git: "2 carrots\nsalt\n",
        differs: None,
    },
    Case {
        name: "both add the same line at one place",
        part: Part::Ingredients,
        base: &["2 carrots", "salt"],
        mine: &["2 carrots", "1 bay leaf", "salt"],
        theirs: &["2 carrots", "1 bay leaf", "salt"],
        asked: 0,
        choices: &[],
        expected: &["2 carrots", "1 bay leaf", "salt"],
        git: "2 carrots\n1 bay leaf\nsalt\n",
        differs: None,
    },
    Case {
        name: "both add the same line at two places",
        part: Part::Ingredients,
        base: &["2 carrots", "1 onion", "salt"],
        mine: &["1 bay leaf", "2 carrots", "1 onion", "salt"],
        theirs: &["2 carrots", "1 onion", "salt", "1 bay leaf"],
        asked: 2,
        choices: &[Pick::Mine, Pick::Mine],
        expected: &["1 bay leaf", "2 carrots", "1 onion", "salt"],
        git: "1 bay leaf\n2 carrots\n1 onion\nsalt\n1 bay leaf\n",
        differs: Some("git takes both additions, so the line is in twice; forkful asks at each place whether it goes there"),
    },
    Case {
        name: "both add different lines at one place, keeping both",
        part: Part::Ingredients,
        base: &["2 carrots", "salt"],
        mine: &["2 carrots", "1 bay leaf", "salt"],
        theirs: &["2 carrots", "1 tsp cumin", "salt"],
        asked: 1,
        choices: &[Pick::Both],
        expected: &["2 carrots", "1 bay leaf", "1 tsp cumin", "salt"],
        git: "2 carrots\n<<<<<<< yours\n1 bay leaf\n=======\n1 tsp cumin\n>>>>>>> theirs\nsalt\n",
        differs: None,
    },
    Case {
        name: "move against edit",
        part: Part::Ingredients,
        base: &["2 carrots", "1 onion", "salt", "pepper", "oil"],
        mine: &["2 carrots", "salt", "pepper", "oil", "1 onion"],
        theirs: &["2 carrots", "1 red onion", "salt", "pepper", "oil"],
        asked: 2,
        choices: &[Pick::Theirs, Pick::Theirs],
        expected: &["2 carrots", "1 red onion", "salt", "pepper", "oil"],
        git: "2 carrots\n<<<<<<< yours\n=======\n1 red onion\n>>>>>>> theirs\nsalt\npepper\noil\n1 onion\n",
        differs: Some("git asks only where the line was, and takes the move: their edit there gives the onion twice; forkful also asks where the line was moved to, so that taking theirs at both places gives their recipe"),
    },
    Case {
        name: "both move the same line to two places",
        part: Part::Ingredients,
        base: &["a", "b", "x", "c", "d"],
        mine: &["x", "a", "b", "c", "d"],
        theirs: &["a", "b", "c", "d", "x"],
        asked: 2,
        choices: &[Pick::Theirs, Pick::Theirs],
        expected: &["a", "b", "c", "d", "x"],
        git: "x\na\nb\nc\nd\nx\n",
        differs: Some("git makes both moves, so the line is in twice; forkful asks at each place"),
    },
    Case {
        name: "a block deleted against a line inserted in it",
        part: Part::Ingredients,
        base: &["2 carrots", "1 onion", "2 celery sticks", "salt"],
        mine: &["2 carrots", "salt"],
        theirs: &["2 carrots", "1 onion", "1 leek", "2 celery sticks", "salt"],
        asked: 1,
        choices: &[Pick::Mine],
        expected: &["2 carrots", "salt"],
        git: "2 carrots\n<<<<<<< yours\n=======\n1 onion\n1 leek\n2 celery sticks\n>>>>>>> theirs\nsalt\n",
        differs: None,
    },
    Case {
        name: "a step split against the same step edited",
        part: Part::Method,
        base: &["Chop.", "Add carrots and stock."],
        mine: &["Chop.", "Add carrots.", "Add hot stock."],
        theirs: &["Chop.", "Add stock."],
        asked: 1,
        choices: &[Pick::Mine],
        expected: &["Chop.", "Add carrots.", "Add hot stock."],
        git: "Chop.\n<<<<<<< yours\nAdd carrots.\nAdd hot stock.\n=======\nAdd stock.\n>>>>>>> theirs\n",
        differs: None,
    },
    Case {
        name: "the review's case: a replaced line against the same change and a line added",
        part: Part::Ingredients,
        base: &["salt"],
        mine: &["sea salt"],
        theirs: &["1 bay leaf", "sea salt"],
        asked: 0,
        choices: &[],
        expected: &["1 bay leaf", "sea salt"],
        git: "<<<<<<< yours\n=======\n1 bay leaf\n>>>>>>> theirs\nsea salt\n",
        differs: Some("their change holds the whole of yours (the same sea salt, a bay leaf before it), so forkful takes it and loses nothing; git asks about the bay leaf alone"),
    },
    Case {
        name: "a line inserted at the edge of a line the other side replaced",
        part: Part::Ingredients,
        base: &["2 carrots", "1 onion", "salt"],
        mine: &["2 carrots", "1 bay leaf", "1 onion", "salt"],
        theirs: &["2 carrots", "1 red onion", "salt"],
        asked: 0,
        choices: &[],
        expected: &["2 carrots", "1 bay leaf", "1 red onion", "salt"],
        git: "2 carrots\n<<<<<<< yours\n1 bay leaf\n1 onion\n=======\n1 red onion\n>>>>>>> theirs\nsalt\n",
        differs: Some("an insertion that only meets the other side's change at its edge changes no line that side changed: forkful merges it"),
    },
    Case {
        name: "both delete overlapping runs",
        part: Part::Ingredients,
        base: &["a", "b", "c", "d", "e"],
        mine: &["a", "d", "e"],
        theirs: &["a", "b", "e"],
        asked: 1,
        choices: &[Pick::Edited("")],
        expected: &["a", "e"],
        git: "a\n<<<<<<< yours\nd\n=======\nb\n>>>>>>> theirs\ne\n",
        differs: None,
    },
    Case {
        name: "different lines changed on both sides, another rewritten beside one",
        part: Part::Ingredients,
        base: &["salt"],
        mine: &["sea salt"],
        theirs: &["1 bay leaf", "salt flakes"],
        asked: 1,
        choices: &[Pick::Mine],
        expected: &["sea salt"],
        git: "<<<<<<< yours\nsea salt\n=======\n1 bay leaf\nsalt flakes\n>>>>>>> theirs\n",
        differs: None,
    },
    Case {
        name: "the same change, and one line more on one side",
        part: Part::Ingredients,
        base: &["1 egg", "1 cup milk", "salt"],
        mine: &["2 eggs", "1 cup buttermilk", "salt"],
        theirs: &["2 eggs", "1 cup milk", "salt"],
        asked: 0,
        choices: &[],
        expected: &["2 eggs", "1 cup buttermilk", "salt"],
        git: "2 eggs\n<<<<<<< yours\n1 cup buttermilk\n=======\n1 cup milk\n>>>>>>> theirs\nsalt\n",
        differs: Some("your change holds the whole of theirs (the same 2 eggs, then your buttermilk where they kept the milk): forkful takes it; git asks about the milk"),
    },
    Case {
        name: "lines reordered against a line added",
        part: Part::Ingredients,
        base: &["flour", "milk", "eggs", "salt", "sugar"],
        mine: &["sugar", "salt", "eggs", "milk", "flour"],
        theirs: &["flour", "milk", "eggs", "salt", "sugar", "vanilla"],
        asked: 2,
        choices: &[Pick::Theirs, Pick::Theirs],
        expected: &["flour", "milk", "eggs", "salt", "sugar", "vanilla"],
        git: "sugar\n<<<<<<< yours\nsalt\neggs\nmilk\nflour\n=======\nvanilla\n>>>>>>> theirs\n",
        differs: Some("git asks only where the lines were put back and takes their removal from the top without asking, so taking theirs loses flour, milk, eggs and salt; forkful asks where they were taken from too, so taking theirs everywhere gives their recipe"),
    },
    Case {
        name: "two lines added at the end, one after a rewritten line",
        part: Part::Ingredients,
        base: &["flour", "milk"],
        mine: &["flour", "oat milk", "butter"],
        theirs: &["flour", "milk", "vanilla"],
        asked: 1,
        choices: &[Pick::Both],
        expected: &["flour", "oat milk", "butter", "milk", "vanilla"],
        git: "flour\n<<<<<<< yours\noat milk\nbutter\n=======\nmilk\nvanilla\n>>>>>>> theirs\n",
        differs: None,
    },
    Case {
        name: "servings changed on both sides",
        part: Part::Servings,
        base: &["4"],
        mine: &["6"],
        theirs: &["8"],
        asked: 1,
        choices: &[Pick::Theirs],
        expected: &["8"],
        git: "<<<<<<< yours\n6\n=======\n8\n>>>>>>> theirs\n",
        differs: None,
    },
    Case {
        name: "the title changed on both sides, written by hand",
        part: Part::Title,
        base: &["Soup"],
        mine: &["Carrot soup"],
        theirs: &["Winter soup"],
        asked: 1,
        choices: &[Pick::Edited("Winter carrot soup")],
        expected: &["Winter carrot soup"],
        git: "<<<<<<< yours\nCarrot soup\n=======\nWinter soup\n>>>>>>> theirs\n",
        differs: None,
    },
    Case {
        name: "the cooking time changed on both sides",
        part: Part::Cook,
        base: &["20"],
        mine: &["25"],
        theirs: &["30"],
        asked: 1,
        choices: &[Pick::Mine],
        expected: &["25"],
        git: "<<<<<<< yours\n25\n=======\n30\n>>>>>>> theirs\n",
        differs: None,
    },
    Case {
        name: "notes, each side a different paragraph",
        part: Part::Notes,
        base: &["Keeps 3 days.", "Freezes well."],
        mine: &["Keeps 4 days in the fridge.", "Freezes well."],
        theirs: &["Keeps 3 days.", "Freezes well, for a month."],
        asked: 0,
        choices: &[],
        expected: &["Keeps 4 days in the fridge.", "Freezes well, for a month."],
        git: "Keeps 4 days in the fridge.\n\nFreezes well, for a month.\n",
        differs: None,
    },
    Case {
        name: "notes, the same paragraph changed differently",
        part: Part::Notes,
        base: &["Keeps 3 days.", "Freezes well."],
        mine: &["Keeps 4 days.", "Freezes well."],
        theirs: &["Keeps 2 days.", "Freezes well."],
        asked: 1,
        choices: &[Pick::Both],
        expected: &["Keeps 4 days.", "Keeps 2 days.", "Freezes well."],
        git: "<<<<<<< yours\nKeeps 4 days.\n=======\nKeeps 2 days.\n>>>>>>> theirs\n\nFreezes well.\n",
        differs: None,
    },
    Case {
        name: "tags added on both sides",
        part: Part::Tags,
        base: &["soup", "winter"],
        mine: &["soup", "vegan", "winter"],
        theirs: &["quick", "soup"],
        asked: 0,
        choices: &[],
        expected: &["quick", "soup", "vegan"],
        git: "<<<<<<< yours\nsoup, vegan, winter\n=======\nquick, soup\n>>>>>>> theirs\n",
        differs: Some("git sees the tags as one line both sides changed; forkful merges them as a set: a tag either side added is in, one either side removed is out"),
    },
    Case {
        name: "a step keeps the section the fork put it in",
        part: Part::Method,
        base: &["Chop.", "Add stock."],
        mine: &["Chop.", "## Broth", "Add hot stock."],
        theirs: &["Chop.", "Add stock, then simmer."],
        asked: 1,
        choices: &[Pick::Theirs],
        expected: &["Chop.", "## Broth", "Add stock, then simmer."],
        git: "Chop.\n<<<<<<< yours\n## Broth\nAdd hot stock.\n=======\nAdd stock, then simmer.\n>>>>>>> theirs\n",
        differs: Some("a section heading is a line of its own that a side put before the step: forkful merges it as a change of its own, so taking their words for the step keeps it in your section (git's theirs drops the heading)"),
    },
    Case {
        name: "a scaled fork against a line added",
        part: Part::ServedIngredients,
        base: &["4", "2 carrots", "1 l stock"],
        mine: &["8", "4 carrots", "2 l stock"],
        theirs: &["4", "2 carrots", "1 l stock", "1 tsp cumin"],
        asked: 0,
        choices: &[],
        expected: &["8", "4 carrots", "2 l stock", "2 tsp cumin"],
        git: "<<<<<<< yours\n4 carrots\n2 l stock\n=======\n2 carrots\n1 l stock\n1 tsp cumin\n>>>>>>> theirs\n",
        differs: Some("git takes the line added after the fork's scaled lines as touching them, a conflict; forkful adds it, and scales it from the parent's 4 servings to the fork's 8"),
    },
];

fn lines(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// A recipe whose `part` reads as `items`, parsed as stored content is.
fn content(part: Part, items: &[&str]) -> Content {
    let mut c = ContentDraft {
        title: "Soup".into(),
        ..ContentDraft::default()
    };
    match part {
        Part::Ingredients => c.ingredients = lines(items),
        Part::Method => {
            c.steps = content::steps_of_lines(&content::parse_method(&items.join("\n\n")))
        }
        Part::Notes => c.notes = Some(items.join("\n\n")),
        Part::Title => c.title = items[0].into(),
        Part::Cook => c.cook = Some(Minutes::new(items[0].parse().unwrap()).unwrap()),
        Part::Servings => {
            c.recipe_yield = Yield {
                servings: Some(items[0].parse().unwrap()),
                text: None,
            }
        }
        Part::Tags => c.tags = lines(items),
        Part::ServedIngredients => {
            c.recipe_yield.servings = Some(items[0].parse().unwrap());
            c.ingredients = lines(&items[1..]);
        }
    }
    c.normalized().unwrap()
}

/// What `c` says of `part`, as the table writes it.
fn read(part: Part, c: &Content) -> Vec<String> {
    match part {
        Part::Ingredients => c.ingredients().to_vec(),
        Part::Method => content::method_lines(c.steps())
            .iter()
            .map(|l| l.text())
            .collect(),
        Part::Notes => merge::paragraphs(c.notes().unwrap_or("")),
        Part::Title => vec![c.title().to_owned()],
        Part::Cook => c.cook().iter().map(|m| m.get().to_string()).collect(),
        Part::Servings => c
            .recipe_yield()
            .servings
            .iter()
            .map(i64::to_string)
            .collect(),
        Part::Tags => c.tags().to_vec(),
        Part::ServedIngredients => c
            .recipe_yield()
            .servings
            .iter()
            .map(i64::to_string)
            .chain(c.ingredients().iter().cloned())
            .collect(),
    }
}

/// The part as the file git is given: a line each, paragraphs apart by a
/// blank line, tags on one line, the ingredients alone of a served list.
fn git_file(part: Part, items: &[&str]) -> String {
    let body = match part {
        Part::Notes => items.join("\n\n"),
        Part::Tags => items.join(", "),
        Part::ServedIngredients => items[1..].join("\n"),
        _ => items.join("\n"),
    };
    body + "\n"
}

/// `git merge-file -p` of the three files.
fn git_merge(case: &Case) -> String {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, items: &[&str]| {
        let path = dir.path().join(name);
        std::fs::write(&path, git_file(case.part, items)).unwrap();
        path
    };
    let (mine, base, theirs) = (
        write("yours", case.mine),
        write("base", case.base),
        write("theirs", case.theirs),
    );
    let out = Command::new("git")
        .args([
            "merge-file",
            "-p",
            "-L",
            "yours",
            "-L",
            "base",
            "-L",
            "theirs",
        ])
        .args([&mine, &base, &theirs])
        .output()
        .expect("git runs: it is how this repository is cloned");
    // Its status is the number of conflicts; over 127, an error.
    assert!(
        out.status.code().is_some_and(|c| (0..128).contains(&c)),
        "git merge-file failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_case_of_the_table_merges_as_written_and_git_as_written() {
    assert!(CASES.len() >= 22, "the table holds {} cases", CASES.len());
    let mut wrong = Vec::new();
    for case in CASES {
        let (base, mine, theirs) = (
            content(case.part, case.base),
            content(case.part, case.mine),
            content(case.part, case.theirs),
        );
        let m = merge::merge(&base, &mine, &theirs);
        if m.conflicts().len() != case.asked {
            wrong.push(format!(
                "{}: asks about {} changes, not {}: {:?}",
                case.name,
                m.conflicts().len(),
                case.asked,
                m.conflicts()
            ));
            continue;
        }
        let choices: Vec<Choice> = case.choices.iter().map(|p| p.choice()).collect();
        match m.resolved(&choices) {
            Ok(merged) => {
                let got = read(case.part, &merged);
                if got != lines(case.expected) {
                    wrong.push(format!(
                        "{}: merges to {got:?}, not {:?}",
                        case.name, case.expected
                    ));
                }
            }
            Err(e) => wrong.push(format!("{}: {e}", case.name)),
        }
        let git = git_merge(case);
        if git != case.git {
            wrong.push(format!(
                "{}: git merges to {git:?}, not {:?}",
                case.name, case.git
            ));
        }
        // A case that says nothing of git must come out as git's merge
        // does: clean where git is clean, the same lines.
        if case.differs.is_none() && !git.contains("<<<<<<<") {
            let ours = git_file(
                case.part,
                &read(case.part, &m.clean().unwrap())
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>(),
            );
            if ours != git {
                wrong.push(format!(
                    "{}: differs from git ({ours:?} against {git:?}) without saying why",
                    case.name
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_table_names_each_case_once() {
    let mut names: Vec<&str> = CASES.iter().map(|c| c.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), CASES.len());
}
