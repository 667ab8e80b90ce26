"""The tree a request asks for, built from its blocks once and read two ways: as the listing the
professor writes into the reply (placeholders for what the student fills in) and as the ground
truth (every directory and file the ZIP's root folder must hold, each file with its source)."""

from __future__ import annotations

from dataclasses import dataclass

from envs.apply_phd_email import (
    AWARD_PLACEHOLDER,
    LETTER_PLACEHOLDER,
    LISTING_INDENT,
    MERGED_AWARDS,
    ROOT_PLACEHOLDER,
)
from generators.apply_phd_email.plan import (
    ACADEMIC,
    CV,
    ENROLLMENT,
    ID_CARD,
    LETTERS,
    PERSONAL,
    PHOTO,
    PORTFOLIO,
    REPORT,
    TRANSCRIPT,
    Structure,
    WorldPlan,
)

AWARDS_FOLDER = "Awards_Certificates"
# Source: one file copied unchanged (a name), several merged in order (a list), or a folder (None).
Source = str | list[str] | None


@dataclass(frozen=True)
class Entry:
    """A listed file (with an optional note on what goes there) or, with children, a folder."""

    name: str
    note: str = ""
    children: tuple[Entry, ...] | None = None


def entries(structure: Structure) -> tuple[Entry, ...]:
    """The numbered top folders of `structure`, with their contents."""
    return tuple(Entry(f"{k:02d}_{folder}", children=_contents(folder, structure))
                 for k, folder in enumerate(structure.folders, start=1))


def _contents(folder: str, structure: Structure) -> tuple[Entry, ...]:
    cv = Entry(structure.cv_name, "your CV" if structure.cv_name == CV else f"your {CV}, renamed")
    if folder == PERSONAL:
        return cv, Entry(ID_CARD), Entry(PHOTO)
    if folder == ACADEMIC:
        awards = (Entry(MERGED_AWARDS, "all award certificates merged into this one PDF, one "
                                       "certificate per page, oldest award first")
                  if structure.merge_awards else
                  Entry(AWARD_PLACEHOLDER, "every award certificate as its own file, file names unchanged"))
        first = () if PERSONAL in structure.folders else (cv,)
        return (*first, Entry(TRANSCRIPT), Entry(ENROLLMENT), Entry(AWARDS_FOLDER, children=(awards,)))
    if folder == LETTERS:
        return (Entry(LETTER_PLACEHOLDER, "one file per recommendation letter, named after the "
                                          "recommender who signed it"),)
    return Entry(PORTFOLIO), Entry(REPORT)


def listing(structure: Structure) -> str:
    """The tree as the reply shows it: one entry per line, folders ending in `/`, one indent
    per level, notes in parentheses after two spaces."""
    lines = [f"{ROOT_PLACEHOLDER}/"]

    def walk(items: tuple[Entry, ...], depth: int) -> None:
        for item in items:
            name = f"{item.name}/" if item.children is not None else item.name
            lines.append(f"{LISTING_INDENT * depth}{name}" + (f"  ({item.note})" if item.note else ""))
            if item.children is not None:
                walk(item.children, depth + 1)

    walk(entries(structure), 1)
    return "\n".join(lines)


def required(structure: Structure, plan: WorldPlan) -> dict[str, Source]:
    """Every path under the root folder (folders end in `/`) with its source, sorted."""
    tree: dict[str, Source] = {}

    def walk(items: tuple[Entry, ...], prefix: str) -> None:
        for item in items:
            if item.children is not None:
                tree[f"{prefix}{item.name}/"] = None
                walk(item.children, f"{prefix}{item.name}/")
            elif item.name == LETTER_PLACEHOLDER:
                for file, person in plan.recommenders.items():
                    tree[f"{prefix}Recommendation_Letter_{person.last}.pdf"] = file
            elif item.name == AWARD_PLACEHOLDER:
                tree.update({f"{prefix}{a.file}": a.file for a in plan.awards})
            elif item.name == MERGED_AWARDS:
                tree[f"{prefix}{item.name}"] = [a.file for a in sorted(plan.awards, key=lambda a: a.year)]
            else:
                tree[f"{prefix}{item.name}"] = CV if item.name == structure.cv_name else item.name

    walk(entries(structure), "")
    return dict(sorted(tree.items()))
