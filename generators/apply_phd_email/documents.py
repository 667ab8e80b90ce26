"""The flat folder of application materials: real PDFs (text the task needs: who signed each
recommendation letter, the year of each award) and a real JPEG photo."""

from __future__ import annotations

import hashlib
import random
from datetime import datetime
from pathlib import Path

from envs.apply_phd_email import FLAT
from generators.apply_phd_email.photo import portrait
from generators.apply_phd_email.plan import (
    CV,
    ENROLLMENT,
    ID_CARD,
    PHOTO,
    PORTFOLIO,
    REPORT,
    TOPICS,
    TRANSCRIPT,
    WorldPlan,
)
from generators.apply_phd_email.text import render
from generators.pdf import pdf_bytes

PAGE_BREAK = "%%page%%"
COURSES = ["CS6101 Advanced Machine Learning", "CS6203 Probabilistic Graphical Models",
           "CS6215 Natural Language Processing", "CS6230 Computer Vision", "CS6302 Distributed Systems",
           "MA6011 Convex Optimization", "MA6120 Stochastic Processes", "CS6410 Information Retrieval",
           "CS6505 Reinforcement Learning", "CS6620 Database Systems", "CS6701 Research Methods",
           "ST6100 Statistical Learning Theory", "CS6812 High-Performance Computing"]
GRADES = ["A", "A", "A-", "A", "B+", "A-"]
PRAISE = ["one of the most capable students I have taught in the last decade",
          "a careful experimentalist with unusual independence and persistence",
          "remarkably quick to turn a vague idea into a working system and a clear write-up"]
INTERNSHIPS = ["built evaluation pipelines for large-scale ranking models",
               "studied failure cases of vision models under sensor noise",
               "implemented a distributed data loader that halved training time"]
PROJECTS = {
    "efficient fine-tuning of language models": "Adapters that match full fine-tuning with 2% of the parameters.",
    "uncertainty estimation for medical image segmentation": "Calibrated pixel-wise confidence maps for radiologists.",
    "graph neural networks for traffic forecasting": "Hour-ahead city traffic prediction from sensor graphs.",
    "retrieval-augmented question answering": "A retriever-reader system that cites its sources.",
    "robust reinforcement learning for robot grasping": "Grasping policies robust to lighting and friction.",
    "privacy-preserving federated learning": "Training across hospitals without sharing patient records.",
    "self-supervised speech representations": "Speech features learned from unlabelled podcasts.",
    "learned indexes for database systems": "Index structures that model the key distribution.",
}
REPORT_PARTS = {"gap": ["need large labelled datasets", "are expensive at inference time",
                  "degrade sharply under distribution shift"],
          "method": ["a consistency-regularised training objective", "a lightweight mixture of experts",
                     "curriculum-based data selection"],
          "metric": ["accuracy", "F1 score", "mean IoU"],
          "motivation": ["it underpins many deployed systems", "data collection is costly in this area",
                         "errors in this setting are expensive"]}
LABS = ["the Institute for Intelligent Systems", "a cloud computing company's research lab",
        "the National Key Laboratory for Data Engineering"]


def _pages(template: str, /, **values: object) -> list[list[str]]:
    text = render(template, **values)
    return [page.strip("\n").split("\n") for page in text.split(PAGE_BREAK)]


def _documents(rng: random.Random, plan: WorldPlan) -> dict[str, tuple[str, str, list[list[str]]]]:
    """file -> (title, author, pages) of every PDF."""
    s = plan.student
    name = s.person.name
    gpa = f"{rng.uniform(3.6, 3.95):.2f}"
    letters = list(plan.recommenders.items())
    courses = [(c, rng.choice([2, 3, 3, 4]), rng.choice(GRADES)) for c in rng.sample(COURSES, 10)]
    projects = [(t[0].upper() + t[1:], PROJECTS[t]) for t in rng.sample(TOPICS, 3)]
    docs = {
        CV: ("Curriculum Vitae", name, _pages(
            "cv.j2", student=s, gpa=gpa, interests=", ".join(rng.sample(TOPICS, 2)),
            advisor=letters[0][1].name, lab=rng.choice(LABS), intern=rng.choice(INTERNSHIPS))),
        ID_CARD: ("Student Identity Card", s.university, _pages("id_card.j2", student=s)),
        TRANSCRIPT: ("Academic Transcript", "Office of the Registrar",
                     _pages("transcript.j2", student=s, courses=courses, gpa=gpa)),
        ENROLLMENT: ("Certificate of Enrollment", "Office of the Registrar", _pages("enrollment.j2", student=s)),
        PORTFOLIO: ("Portfolio", name, _pages("portfolio.j2", student=s, projects=projects)),
        REPORT: ("Project Report", name, _pages(
            "report.j2", student=s, benchmarks=rng.randint(3, 6), gain=f"{rng.uniform(1.2, 4.8):.1f}",
            overhead=rng.choice([5, 8, 10, 15]), **{key: rng.choice(values) for key, values in REPORT_PARTS.items()})),
    }
    near_miss = rng.randrange(2)  # this letter also names the other recommender
    for i, (file, signer) in enumerate(letters):
        docs[file] = ("Letter of Recommendation", signer.name, _pages(
            "letter.j2", student=s, signer=signer, signer_title=rng.choice(["Professor", "Associate Professor"]),
            department=s.major,
            years=rng.randint(2, 4), course=rng.choice(COURSES).split(" ", 1)[1], praise=rng.choice(PRAISE),
            colleague=letters[1 - i][1].name if i == near_miss else None))
    for award in plan.awards:
        docs[award.file] = ("Certificate of Award", s.university, _pages(
            "award.j2", student=s, award=award, issuer=s.university,
            signatory=rng.choice(["Office of Student Affairs", "Office of the President"])))
    return docs


def write_documents(folder: Path, rng: random.Random, plan: WorldPlan, scanned: datetime) -> dict[str, str]:
    """Write every file of the flat folder under `folder`; returns file -> SHA-256."""
    target = folder / FLAT
    target.mkdir(parents=True, exist_ok=True)
    files = {file: pdf_bytes(pages, title=title, author=author, moment=scanned)
             for file, (title, author, pages) in _documents(rng, plan).items()}
    files[PHOTO] = portrait(rng)
    for file, data in files.items():
        (target / file).write_bytes(data)  # a fresh world folder: nothing to replace atomically
    return {file: hashlib.sha256(data).hexdigest() for file, data in sorted(files.items())}
