"""The probes of ``benchmarks/judge_checklist.py``: templates with their own vocabulary, and
probes mined from evaluation-only public sets.

Every probe is a (claim, passage, gold label) with its capability, its direction (which
way the label goes, so that no constant answer passes a capability), its source (template
id, or data set + file + row) and whether it is judged as a pair by the bare judge or as a
long document through the engine. Generation is deterministic for a seed: one
``random.Random`` per capability, seeded by ``f"{seed}:{capability}"``.

Templated probes use only the names, places, organisations, quantities and sentence
frames written in this file (fictional people, organisations, towns and products, so that
a label never depends on world knowledge, plus a few real capitals and real background
facts used as off-topic filler). Mined probes come only from sets this project never
trains on (NaN-NLI, ANLI R1-R3 dev, TaxiNLI, ConTRoL dev, FEVER-Symmetric test), and
a mined probe whose claim or passage also occurs in a set the project trains or may
train on is dropped (:func:`training_index`, the project's own leak test).
"""

from __future__ import annotations

import ast
import csv
import datetime as dt
import json
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

SUPPORT, CONTRADICT, IRRELEVANT = "SUPPORT", "CONTRADICT", "IRRELEVANT"

CAPABILITIES: tuple[str, ...] = (
    "negation", "numbers", "entities", "off_topic", "paraphrase", "partial", "long_document",
)
"""The capabilities, in report order."""


@dataclass(frozen=True)
class Probe:
    """One labelled test case. ``document``: judged as one document through the engine
    (passage splitting and the document decision), else as one pair by the bare judge."""

    id: str
    capability: str
    direction: str
    label: str
    claim: str
    passage: str
    source: str
    origin: str  # "templated" | "mined"
    document: bool = False
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def as_json(self) -> dict[str, Any]:
        out = {"id": self.id, "capability": self.capability, "direction": self.direction, "label": self.label,
               "origin": self.origin, "source": self.source, "claim": self.claim, "passage": self.passage}
        if self.meta:
            out["meta"] = dict(self.meta)
        return out


DIRECTIONS: dict[str, dict[str, tuple[str, str]]] = {
    # capability -> direction -> (gold label, what it tests)
    "negation": {
        "a_neg_claim_neg_evidence": (SUPPORT, "(a) a negated claim, evidence that states the negative"),
        "b_aff_claim_neg_evidence": (CONTRADICT, "(b) an affirmative claim, negative evidence"),
        "c_neg_claim_aff_evidence": (CONTRADICT, "(c) a negated claim, affirmative evidence"),
        "d_aff_claim_negation_elsewhere": (SUPPORT, "(d) an affirmative claim, affirmative evidence with a negation "
                                                    "about something else"),
        "e_double_negation_support": (SUPPORT, "(e) double negation (\"it is not true that ... not ...\"), supported"),
        "e_double_negation_contradict": (CONTRADICT, "(e) double negation, contradicted"),
    },
    "numbers": {
        f"{lab.lower()}_{kind}": (lab, text)
        for kind, (s_text, c_text) in {
            "count": ("the same count, reworded or reformatted (3,559 / 3559)", "a count one step off"),
            "year": ("the same year, reworded", "a year one to three off"),
            "date": ("the same date, reformatted (7 November 1867 / November 7, 1867)", "a day or month one step off"),
            "unit": ("the same quantity, unit spelled out (km / kilometres)", "the same number in another unit "
                                                                              "(m / km, mg / g, million / billion)"),
            "percent": ("the same percentage (% / percent)", "a percentage one step off"),
            "range": ("an exact value inside a claimed bound or range (more than / between)", "a value outside the "
                                                                                              "claimed bound or range"),
        }.items()
        for lab, text in ((SUPPORT, s_text), (CONTRADICT, c_text))
    },
    "entities": {
        **{f"{lab.lower()}_{kind}": (lab, f"{what} ({kind} in the same slot)")
           for kind in ("place", "person", "organisation")
           for lab, what in ((SUPPORT, "the same entity"), (CONTRADICT, "another entity"))},
        "support_role": (SUPPORT, "two named parties in their roles, reworded (A acquired B / B was acquired by A)"),
        "contradict_role": (CONTRADICT, "two named parties with their roles swapped (A acquired B / B acquired A)"),
    },
    "off_topic": {
        "other_subject_same_attribute": (IRRELEVANT, "the same statement about another subject"),
        "same_domain_shared_words": (IRRELEVANT, "another subject of the same domain, sharing words with the claim"),
        "other_domain": (IRRELEVANT, "a passage from another domain"),
        "same_entity_other_attribute": (IRRELEVANT, "the same subject, another attribute"),
        "control_support": (SUPPORT, "control: an on-topic passage that supports the claim"),
        "control_contradict": (CONTRADICT, "control: an on-topic passage that contradicts the claim"),
    },
    "paraphrase": {
        "paraphrase_support": (SUPPORT, "the claim paraphrases the passage"),
        "opposite_contradict": (CONTRADICT, "the claim paraphrases the opposite (antonym, converse, reversed "
                                            "direction; no negation word)"),
    },
    "partial": {
        "supported_part": (SUPPORT, "a compound claim; the passage supports one part, is silent on the other "
                                    "(the project's convention: partial support counts)"),
        "contradicted_part": (CONTRADICT, "a compound claim; the passage contradicts one part, is silent on "
                                          "the other"),
    },
    "long_document": {
        "support_in_long": (SUPPORT, "one supporting sentence among 16-24 off-topic ones"),
        "contradict_in_long": (CONTRADICT, "one contradicting sentence among 16-24 off-topic ones"),
        "none_in_long": (IRRELEVANT, "16-24 off-topic sentences, some about the same domain or the same statement "
                                     "of another subject"),
    },
}

# ---------------------------------------------------------------------------------------
# vocabulary: every name, place, organisation and product below is written for this
# benchmark (fictional, so no label depends on world knowledge), except the cities
# (real, used as birthplaces, head offices and venues) and the capitals.

PEOPLE = (
    "Amelia Okafor", "Tomás Herrera", "Ingrid Solberg", "Rajesh Menon", "Claire Dubois", "Kenji Watanabe",
    "Fatima Haddad", "Marek Nowak", "Grace Mwangi", "Lucas Ferreira", "Hannah Keller", "Samuel Osei",
    "Elena Petrova", "David Lindqvist", "Aisha Bello", "Oliver Grant", "Mei Lin Chen", "Pablo Ortega",
    "Nadia Rahman", "Henrik Dahl", "Sofia Marchetti", "Jonas Weber", "Priya Raman", "Thomas Byrne",
)
ORGS = (
    "Velcor Industries", "Dunmore Systems", "Northwind Logistics", "Bluestone Energy", "Harrow & Pike",
    "Kestrel Aviation", "Meridian Bank", "Tallis Media", "Orbis Telecom", "Greenfield Foods",
    "Castellan Insurance", "Lumen Robotics", "Redline Motors", "Pemberton Steel", "Sablewood Publishing",
    "Corran Shipping",
)
PHARMA = (
    "Solenne Pharmaceuticals", "Vantrel Biotech", "Quorra Pharma", "Hadley Laboratories", "Ostrava Biologics",
    "Ebrill Therapeutics",
)
TOWNS = (
    "Carrow Falls", "Redmond Springs", "Alder Creek", "Orchard Hill", "Holloway Bay", "Ashcombe Vale",
    "Kilbride Cross", "Stanmore Ridge", "Pinecrest Hollow", "Brambleford", "Eastmere", "Thornwick",
    "Wrenfield", "Marlow Ferry", "Cobalt Springs", "Harlan Gap",
)
CITIES = (
    "Leeds", "Porto", "Lyon", "Kraków", "Nairobi", "Osaka", "Valparaíso", "Tampere", "Bergen", "Bologna",
    "Ghent", "Cork", "Adelaide", "Halifax", "Mombasa", "Izmir", "Seville", "Brno", "Pune", "Cebu",
    "Curitiba", "Tartu", "Graz", "Utrecht",
)
STRUCTURES = (
    "the Harlow Bridge", "the Marston Viaduct", "the Eastgate Tunnel", "the Varden Dam", "the Pellham Lighthouse",
    "the Kessler Tower", "the Brenton Pier", "the Linwood Observatory", "the Quillan Aqueduct", "the Tovey Canal Lock",
)
VENUES = (
    "the Kellerman Library", "the Rowe Museum of Art", "the Halvorsen Gallery", "the Whitcombe Theatre",
    "the Marsh Natural History Museum", "the Oriel Science Centre", "the Penrose Library", "the Castine Concert Hall",
)
LIBRARIES = ("the Kellerman Library", "the Penrose Library", "the Ashby Public Library", "the Corvell University "
             "Library", "the Dunmere County Library")
ENGINE_MAKERS = ("Velcor Industries", "Pemberton Steel", "Redline Motors", "Lumen Robotics")
FLEETS = ("Northwind Logistics", "Corran Shipping", "Greenfield Foods", "Orbis Telecom")
HOSPITALS = (
    "St. Brigid's Hospital", "Calder Valley Hospital", "the Northgate Clinic", "Ridgeway General Hospital",
    "the Elmstead Children's Hospital", "Saint Aurelia Medical Centre",
)
DRUGS = (
    "the drug corvastin", "the antiviral tenobrivir", "the drug mirelapam", "the drug ostavirine",
    "the antibiotic lexocillin", "the drug velanotide", "the painkiller dromafen", "the drug halopridine",
)
TRIALS = ("the CEDAR-2 trial", "the HARBOR study", "the NORTHSTAR trial", "the ALPINE-1 trial", "the SENTINEL study",
          "the KITE-5 trial")
STADIUMS = ("the Corvin Stadium", "the Redgate Arena", "the Falcon Park stadium", "the Mill Lane Ground",
            "the Saltmarsh Arena")
EVENTS = ("the 2022 Nordic Water Forum", "the 2022 Congress on Rural Health", "the 2022 Harbourlight Film Festival",
          "the 2022 Summit on Urban Transport", "the 2022 Westmark Robotics Expo",
          "the 2022 Conference on Coastal Engineering")
BOOKS = ("the novel The Salt Orchard", "the novel A Winter in Tartu", "the novel The Glass Harbour",
         "the novel Nine Lanterns", "the novel The Copper Field", "the novel Rivers Without Names")
FILMS = ("the film A Quiet Harbour", "the film The Long Field", "the film Lanterns at Dusk", "the film Eastbound",
         "the film The Ninth Winter", "the film Salt and Stone")
COUNTRIES = (  # (country, capital, other large cities of that country)
    ("Australia", "Canberra", ("Sydney", "Melbourne")), ("Canada", "Ottawa", ("Toronto", "Montreal")),
    ("Brazil", "Brasília", ("Rio de Janeiro", "São Paulo")), ("Turkey", "Ankara", ("Istanbul",)),
    ("Switzerland", "Bern", ("Zurich", "Geneva")), ("Nigeria", "Abuja", ("Lagos",)),
    ("New Zealand", "Wellington", ("Auckland",)), ("Morocco", "Rabat", ("Casablanca", "Marrakesh")),
    ("Vietnam", "Hanoi", ("Ho Chi Minh City",)), ("Pakistan", "Islamabad", ("Karachi", "Lahore")),
    ("Kazakhstan", "Astana", ("Almaty",)), ("Scotland", "Edinburgh", ("Glasgow",)),
    ("Belize", "Belmopan", ("Belize City",)), ("India", "New Delhi", ("Mumbai",)),
)

POOLS: dict[str, tuple[str, ...]] = {
    "person": PEOPLE, "org": ORGS, "pharma": PHARMA, "town": TOWNS, "city": CITIES, "structure": STRUCTURES,
    "venue": VENUES, "library": LIBRARIES, "hospital": HOSPITALS, "drug": DRUGS, "trial": TRIALS, "stadium": STADIUMS,
    "event": EVENTS,
    "book": BOOKS, "film": FILMS, "country": tuple(c for c, _, _ in COUNTRIES),
}
DOMAIN: dict[str, str] = {
    "person": "people", "org": "business", "structure": "infrastructure", "venue": "culture", "library": "culture",
    "town": "local",
    "hospital": "health", "drug": "health", "trial": "health", "stadium": "sport", "country": "politics",
    "event": "culture", "book": "culture", "film": "culture",
}

NEUTRAL: dict[str, tuple[str, ...]] = {
    # attributes that say nothing about any frame below (no place, date, count, office or verdict)
    "person": ("has three children", "is a keen chess player", "speaks four languages",
               "is a keen amateur photographer", "plays the cello", "keeps bees as a hobby",
               "writes a weekly newspaper column", "collects old maps"),
    "org": ("sponsors a youth football league", "publishes an annual sustainability report",
            "runs a graduate training scheme", "has a blue and white logo",
            "hosts an open day for local schools every spring", "offers its staff free language lessons"),
    "structure": ("is painted dark green", "appears in several films", "is lit up at night",
                  "featured on a postage stamp", "is a popular spot for photographers"),
    "venue": ("has a café on its top floor", "runs free workshops for children", "is housed in a former railway "
              "depot", "has a large collection of maps", "has a gift shop run by volunteers"),
    "library": ("has a café on its top floor", "runs free workshops for children", "is housed in a former railway "
                "depot", "has a gift shop run by volunteers"),
    "town": ("holds a cheese festival every autumn", "is twinned with a town in Portugal",
             "is known for its Victorian market hall", "has a small maritime museum", "has a community orchard"),
    "hospital": ("has a rooftop garden for patients", "runs a volunteer programme", "is a teaching hospital",
                 "has its own radio station for patients"),
    "drug": ("is taken as a tablet", "was developed at a university laboratory", "must be stored in a refrigerator",
             "is sold under several brand names"),
    "trial": ("was paid for by a public research fund", "was coordinated from a university in Sweden",
              "compared the treatment with a placebo"),
    "stadium": ("has a retractable roof", "hosts concerts in the summer", "is home to a rugby team"),
}

DISTRACTORS: dict[str, tuple[str, ...]] = {
    # background sentences that name none of the subjects above: off-topic passages and long-document filler
    "business": (
        "Shares in European carmakers fell on Tuesday after new import tariffs were announced.",
        "The central bank left its main interest rate unchanged at its March meeting.",
        "Several regional airlines reported higher fuel costs in the second quarter.",
        "Retail sales rose slightly in December, helped by online shopping.",
        "A shortage of microchips delayed deliveries of new vans throughout the spring.",
        "Coffee prices reached a ten-year high after poor harvests in Brazil and Vietnam.",
        "The competition authority opened an inquiry into the pricing of baby formula.",
        "Many firms have kept hybrid working arrangements introduced during the pandemic.",
        "The shipping group Maersk reported a record profit in 2021.",
        "The merger of the British mobile networks Vodafone and Three was approved in 2024.",
        "Volkswagen announced job cuts at several of its German plants in 2024.",
        "Shares in Nokia are listed on the stock exchange in Helsinki.",
    ),
    "health": (
        "Hospital admissions for influenza rose sharply during the winter of 2019.",
        "Regular physical activity lowers the risk of heart disease, according to several large studies.",
        "Health authorities recommend that adults sleep seven to nine hours a night.",
        "Measles cases increased in several countries where childhood vaccination had declined.",
        "Vitamin D is produced in the skin when it is exposed to sunlight.",
        "Antibiotics do not work against viral infections such as the common cold.",
        "Drinking sugary drinks is linked to a higher risk of type 2 diabetes.",
        "Nurses in several regions went on strike over pay and staffing levels.",
        "A trial of a malaria vaccine in Ghana, Kenya and Malawi enrolled children under the age of two.",
        "Doctors in Manchester reported a rise in hospitalisations for asthma during the 2022 heatwave.",
        "Patients in Lisbon waited longer for routine operations in 2022 than before the pandemic.",
        "The first cholera vaccine was developed in the 1880s.",
    ),
    "infrastructure": (
        "Engineers in Rotterdam began testing a floating solar farm on a disused harbour basin.",
        "Motorway traffic in the Netherlands fell by a quarter during the 2020 lockdowns.",
        "A landslide closed the main coastal road in northern Portugal for three days in 2018.",
        "The Channel Tunnel links Folkestone in England with Coquelles in France.",
        "Many nineteenth-century railway bridges were built from wrought iron.",
        "Road salt speeds up the corrosion of steel in bridges and car bodies.",
        "Plans for a high-speed rail link between Lisbon and Madrid have been revised several times.",
        "The new tram line in Valencia carried more passengers than expected in its first year.",
        "The Øresund Bridge, completed in 1999, links Copenhagen and Malmö.",
        "The Hoover Dam was completed in 1936.",
        "The Forth Bridge in Scotland is painted red.",
        "Part of the Morandi Bridge in Genoa collapsed in 2018.",
        "The 2011 Tōhoku earthquake damaged the Fukushima Daiichi nuclear power plant.",
    ),
    "local": (
        "Farmers' markets have become more popular in small towns across Wales.",
        "The river Severn flooded parts of Shrewsbury in February 2020.",
        "Rural bus services in Scotland were cut back sharply during the 2010s.",
        "Many coastal villages in Cornwall depend on summer tourism.",
        "House prices in Dublin rose by almost ten percent in 2021.",
        "Volunteers planted more than a thousand trees along the canal towpath in Birmingham.",
        "Several villages in the Alps have banned short-term holiday lets.",
        "Cars have been banned from most of the centre of Pontevedra in Spain since 1999.",
        "The 2021 census counted about 59.6 million residents in England and Wales.",
        "Snow fell in Rome in February 2012, closing many schools.",
        "Wildfires destroyed hundreds of homes on the Greek island of Rhodes in 2023.",
    ),
    "culture": (
        "The Booker Prize was first awarded in 1969.",
        "The Louvre reopened to visitors in July 2020 after a four-month closure.",
        "Vinyl record sales have grown every year for more than a decade.",
        "The Venice Biennale is held every two years.",
        "Many public libraries now lend e-books as well as printed books.",
        "The first public film screening by the Lumière brothers took place in Paris in 1895.",
        "The opera house in Sydney was designed by the Danish architect Jørn Utzon.",
        "The Rijksmuseum in Amsterdam reopened to the public in 2013 after a ten-year renovation.",
        "The British Library holds more than 170 million items.",
        "The Vienna State Opera can seat about 1,700 spectators.",
        "The novelist Hilary Mantel won the Booker Prize twice.",
    ),
    "sport": (
        "The Tour de France was first held in 1903.",
        "Attendance at women's football matches in England reached a record high in 2022.",
        "The marathon distance was fixed at 42.195 kilometres in 1921.",
        "Cricket is the most popular sport in India.",
        "Several football clubs have installed artificial pitches to reduce maintenance costs.",
        "The Summer Olympics in Tokyo were postponed from 2020 to 2021 because of the pandemic.",
        "Wembley Stadium in London can seat 90,000 spectators.",
        "Spectators returned to English football grounds in 2021 after more than a year without crowds.",
        "Roger Federer won the Wimbledon final eight times.",
    ),
    "science": (
        "Arctic sea ice reached its lowest recorded extent in September 2012.",
        "Lightning strikes the Earth about 40 to 50 times every second.",
        "The summer of 2003 was one of the hottest on record in Europe.",
        "Honeybees communicate the location of flowers through a waggle dance.",
        "The James Webb Space Telescope was launched on 25 December 2021.",
        "Sea levels are rising as glaciers and ice sheets melt.",
        "The eruption of Eyjafjallajökull in Iceland in 2010 closed much of European airspace.",
        "The Pacific is the largest and deepest of the world's oceans.",
    ),
    "politics": (
        "Voter turnout in the 2019 European Parliament elections was the highest in twenty years.",
        "Parliament passed a new data protection law after a long debate.",
        "Local elections in Norway are held every four years.",
        "The coalition government survived a confidence vote by a narrow margin.",
        "Several ministers called for a review of the national school curriculum.",
        "Jacinda Ardern was re-elected as prime minister of New Zealand in 2020.",
        "Voters in Switzerland take part in several national referendums each year.",
        "The mayor of London is elected every four years.",
    ),
    "people": (
        "Roald Amundsen led the first expedition to reach the South Pole in 1911.",
        "Marie Curie was the first person to win Nobel Prizes in two sciences.",
        "Many retired athletes go on to work as coaches or commentators.",
        "The composer Jean Sibelius spent most of his life in Finland.",
        "Ada Lovelace is often described as the first computer programmer.",
        "Angela Merkel was chancellor of Germany from 2005 to 2021.",
        "The writer Chinua Achebe was born in Ogidi, Nigeria, in 1930.",
        "Nelson Mandela was sworn in as president of South Africa on 10 May 1994.",
        "World leaders met in Glasgow for the 2021 climate summit.",
        "An open letter signed by hundreds of researchers in 2023 called for a pause in AI development.",
        "Elizabeth Holmes was found guilty of fraud in 2022.",
        "Barack Obama was re-elected in 2012.",
        "Toni Morrison's first novel, The Bluest Eye, was published in 1970.",
    ),
}

# -- negation frames: (id, subject type, affirmative, negated, other negative statements,
#    other affirmative statements, a negated clause about something else)
NEG_FRAMES: tuple[tuple[str, str, str, str, tuple[str, ...], tuple[str, ...], str], ...] = (
    ("damaged", "structure", "{S} was damaged in the 2011 earthquake", "{S} was not damaged in the 2011 earthquake",
     ("{S} suffered no damage in the 2011 earthquake", "The 2011 earthquake left {S} undamaged"),
     ("The 2011 earthquake damaged {S}", "{S} suffered damage in the 2011 earthquake"), "no one was injured there"),
    ("closed_renovation", "venue", "{S} was closed to the public during the renovation",
     "{S} was not closed to the public during the renovation",
     ("{S} remained open to the public throughout the renovation",
      "{S} never closed its doors to the public during the renovation"),
     ("During the renovation, {S} was shut to visitors", "{S} shut its doors to the public during the renovation"),
     "none of its staff lost their jobs"),
    ("reelected", "person", "{S} was re-elected in 2019", "{S} was not re-elected in 2019",
     ("{S} failed to win re-election in 2019", "{S} lost the 2019 election and was not returned to office"),
     ("{S} won re-election in 2019", "Voters re-elected {S} in 2019"), "the party did not win a majority"),
    ("attended", "person", "{S} attended the climate summit in Geneva",
     "{S} did not attend the climate summit in Geneva",
     ("{S} stayed away from the climate summit in Geneva", "{S} was absent from the climate summit in Geneva"),
     ("{S} was among the delegates at the climate summit in Geneva", "{S} took part in the climate summit in Geneva"),
     "no final agreement was reached"),
    ("resigned", "person", "{S} resigned from the board in 2016", "{S} did not resign from the board in 2016",
     ("{S} remained on the board throughout 2016", "{S} stayed on the board for all of 2016"),
     ("{S} stepped down from the board in 2016", "{S} gave up a seat on the board in 2016"), "no reason was given"),
    ("guilty", "person", "{S} was found guilty of fraud", "{S} was not found guilty of fraud",
     ("{S} was acquitted of fraud", "The court acquitted {S} of fraud"),
     ("{S} was convicted of fraud", "The court convicted {S} of fraud"), "the trial was not televised"),
    ("signed_letter", "person", "{S} signed the open letter on press freedom",
     "{S} did not sign the open letter on press freedom",
     ("{S} declined to sign the open letter on press freedom",
      "{Sp} name is absent from the list of signatories of the open letter on press freedom"),
     ("{S} was one of the signatories of the open letter on press freedom",
      "{Sp} signature is on the open letter on press freedom"), "the letter did not name any government"),
    ("profit", "org", "{S} reported a profit in 2020", "{S} did not report a profit in 2020",
     ("{S} made no profit in 2020", "{S} reported a loss for 2020"),
     ("{S} was profitable in 2020", "{S} made a profit in 2020"), "it did not pay a dividend"),
    ("job_cuts", "org", "{S} cut jobs after the merger", "{S} did not cut jobs after the merger",
     ("{S} made no job cuts after the merger", "{S} kept its entire workforce after the merger"),
     ("{S} eliminated jobs after the merger", "After the merger, {S} reduced its workforce"),
     "no factories were closed"),
    ("recall", "org", "{S} recalled its X-200 heaters in 2018", "{S} did not recall its X-200 heaters in 2018",
     ("{S} issued no recall of its X-200 heaters in 2018", "{S} never recalled its X-200 heaters"),
     ("In 2018, {S} issued a recall of its X-200 heaters", "{S} called back its X-200 heaters in 2018"),
     "no injuries were reported"),
    ("fined", "org", "{S} was fined by the competition regulator", "{S} was not fined by the competition regulator",
     ("The competition regulator did not fine {S}", "The competition regulator decided against fining {S}"),
     ("The competition regulator fined {S}", "{S} received a fine from the competition regulator"),
     "it did not admit any wrongdoing"),
    ("listed", "org", "{S} is listed on the stock exchange", "{S} is not listed on the stock exchange",
     ("{S} is privately held and its shares do not trade on any stock exchange",
      "Shares in {S} are not traded on the stock exchange"),
     ("Shares in {S} trade on the stock exchange", "{S} is a publicly listed company on the stock exchange"),
     "it does not publish profit forecasts"),
    ("approved_children", "drug", "{S} is approved for use in children", "{S} is not approved for use in children",
     ("Regulators have refused to approve {S} for use in children", "{S} has no approval for use in children"),
     ("Regulators have approved {S} for use in children", "{S} has been approved for children"),
     "it is not sold without a prescription"),
    ("reduced_hospitalisation", "drug", "{S} reduced the risk of hospitalisation in the trial",
     "{S} did not reduce the risk of hospitalisation in the trial",
     ("In the trial, {S} had no effect on the risk of hospitalisation",
      "{S} failed to lower the risk of hospitalisation in the trial"),
     ("In the trial, {S} lowered the risk of hospitalisation", "The trial found that {S} cut the risk of "
                                                                "hospitalisation"),
     "it did not prevent mild infections"),
    ("side_effects", "drug", "{S} caused serious side effects in the trial",
     "{S} did not cause serious side effects in the trial",
     ("No serious side effects of {S} were seen in the trial", "{S} caused no serious side effects in the trial"),
     ("Serious side effects of {S} were seen in the trial", "In the trial, {S} led to serious side effects"),
     "no patient left the trial early"),
    ("cholera_water", "town", "The 2017 cholera outbreak in {S} was linked to contaminated water",
     "The 2017 cholera outbreak in {S} was not linked to contaminated water",
     ("Investigators ruled out contaminated water as the source of the 2017 cholera outbreak in {S}",
      "Contaminated water played no part in the 2017 cholera outbreak in {S}"),
     ("Contaminated water caused the 2017 cholera outbreak in {S}",
      "Investigators traced the 2017 cholera outbreak in {S} to contaminated water"), "no deaths were recorded"),
    ("car_ban", "town", "{S} banned cars from its centre in 2015", "{S} did not ban cars from its centre in 2015",
     ("Cars were still allowed in the centre of {S} throughout 2015",
      "{S} rejected a ban on cars in its centre in 2015"),
     ("In 2015, cars were banned from the centre of {S}", "{S} closed its centre to cars in 2015"),
     "bicycles were not affected"),
    ("railway", "town", "{S} has a railway station", "{S} does not have a railway station",
     ("{S} has no railway station", "There is no railway station in {S}"),
     ("There is a railway station in {S}", "Trains stop at the railway station in {S}"), "it has no airport"),
    ("snow", "town", "It snowed in {S} on Christmas Day 2010", "It did not snow in {S} on Christmas Day 2010",
     ("No snow fell in {S} on Christmas Day 2010", "Christmas Day 2010 in {S} was dry, with no snow"),
     ("Snow fell in {S} on Christmas Day 2010", "{S} had snowfall on Christmas Day 2010"),
     "no flights were cancelled"),
    ("cup_final", "person", "{S} played in the 2014 cup final", "{S} did not play in the 2014 cup final",
     ("{S} missed the 2014 cup final through injury", "{S} was injured and missed the 2014 cup final"),
     ("{S} appeared in the 2014 cup final", "{S} was in the starting line-up for the 2014 cup final"),
     "the team did not win"),
    ("shortlisted", "person", "{Sp} first novel was shortlisted for the Halden Prize",
     "{Sp} first novel was not shortlisted for the Halden Prize",
     ("{Sp} first novel did not make the shortlist for the Halden Prize",
      "The Halden Prize shortlist did not include {Sp} first novel"),
     ("The Halden Prize shortlist included {Sp} first novel", "{Sp} first novel made the shortlist for the Halden "
                                                              "Prize"), "it did not win"),
    ("sundays", "venue", "{S} is open on Sundays", "{S} is not open on Sundays",
     ("{S} is closed on Sundays", "{S} does not open on Sundays"),
     ("{S} opens its doors on Sundays", "Visitors can go to {S} on Sundays"), "entry is not free"),
    ("free_parking", "hospital", "{S} offers free parking to patients", "{S} does not offer free parking to patients",
     ("Patients have to pay for parking at {S}", "Parking at {S} is not free for patients"),
     ("Parking at {S} is free for patients", "Patients can park for free at {S}"), "it has no maternity ward"),
    ("emergency", "hospital", "{S} has an emergency department", "{S} does not have an emergency department",
     ("{S} has no emergency department", "There is no emergency department at {S}"),
     ("There is an emergency department at {S}", "{S} runs an emergency department"),
     "it does not treat children"),
    ("double_blind", "trial", "{S} was double-blind", "{S} was not double-blind",
     ("{S} was not blinded: patients and doctors knew who received the drug",
      "{S} was an open-label trial, so patients knew which treatment they received"),
     ("{S} was a double-blind trial", "{S} used a double-blind design"), "the results were not published until 2021"),
)

# -- entity frames: (id, entity type, subject type, entity pool, passages, claims); one value per slot
ENTITY_FRAMES: tuple[tuple[str, str, str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("birthplace", "place", "person", "city", ("{S} was born in {E}.", "{S} was born in {E} and went to school there."),
     ("{S} was born in {E}.", "{Sp} birthplace is {E}.", "{S} is a native of {E}.")),
    ("head_office", "place", "org", "city",
     ("{S} has its headquarters in {E}.", "{S}, which has its headquarters in {E}, employs staff in nine countries."),
     ("{S} is headquartered in {E}.", "The headquarters of {S} are in {E}.", "{Sp} head office is in {E}.")),
    ("capital", "place", "country", "capital", ("{E} is the capital of {S}.", "The capital of {S} is {E}.",
                                                "{E}, the capital of {S}, is home to the national parliament."),
     ("The capital of {S} is {E}.", "{E} is the capital city of {S}.", "{Sp} capital is {E}.")),
    ("venue", "place", "event", "city", ("{S} was held in {E}.", "{E} hosted {S}."),
     ("{S} took place in {E}.", "{E} was the host city of {S}.")),
    ("chief_executive", "person", "org", "person",
     ("{E} is the chief executive of {S}.", "{Sp} chief executive, {E}, presented the annual results on Monday."),
     ("{Sp} chief executive is {E}.", "{E} is the CEO of {S}.", "{S} is led by chief executive {E}.")),
    ("author", "person", "book", "person", ("{S} was written by {E}.", "{E} wrote {S}, which was published in 2009."),
     ("{E} is the author of {S}.", "{S} was written by {E}.")),
    ("mayor", "person", "town", "person", ("The mayor of {S} is {E}.",
                                           "{E}, the mayor of {S}, opened the new library on Saturday."),
     ("{E} is the mayor of {S}.", "{Sp} mayor is {E}.")),
    ("director", "person", "film", "person", ("{S} was directed by {E}.", "{E} directed {S}, a drama set in a mining "
                                                                          "town."),
     ("{E} directed {S}.", "{S} is the work of the director {E}.")),
    ("owner", "organisation", "stadium", "org", ("{S} is owned by {E}.", "{E} owns {S}, which it bought in 2008."),
     ("{E} is the owner of {S}.", "{S} belongs to {E}.")),
    ("maker", "organisation", "drug", "pharma", ("{S} is manufactured by {E}.", "{E} manufactures {S} at a plant "
                                                                               "near Ghent."),
     ("{E} makes {S}.", "{S} is produced by {E}.")),
    ("parent", "organisation", "org", "org", ("{S} is a subsidiary of {E}.", "{S} has been a subsidiary of {E} since "
                                                                             "2011."),
     ("{E} is the parent company of {S}.", "{S} is owned by its parent company, {E}.")),
)

# -- role frames: (id, party pool, passages, claims that keep the roles, claims that swap them)
ROLE_FRAMES: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    ("acquired", "org", ("{A} acquired {B} in 2015.", "In 2015, {A} bought its smaller rival {B}."),
     ("{B} was acquired by {A} in 2015.", "{A} took over {B} in 2015."),
     ("{B} acquired {A} in 2015.", "{A} was acquired by {B} in 2015.")),
    ("final", "person", ("{A} beat {B} in the final of the 2019 Kestrel Open.",
                         "In the final of the 2019 Kestrel Open, {A} defeated {B} in straight sets."),
     ("{A} won the final of the 2019 Kestrel Open.", "{B} lost to {A} in the final of the 2019 Kestrel Open."),
     ("{B} won the final of the 2019 Kestrel Open.", "{B} beat {A} in the final of the 2019 Kestrel Open.")),
    ("succeeded", "person", ("{A} succeeded {B} as chair of the ethics committee in 2018.",
                             "In 2018, {A} took over from {B} as chair of the ethics committee."),
     ("{B} was succeeded by {A} as chair of the ethics committee in 2018.",
      "{A} replaced {B} as chair of the ethics committee in 2018."),
     ("{B} succeeded {A} as chair of the ethics committee in 2018.",
      "In 2018, {B} took over from {A} as chair of the ethics committee.")),
    ("election", "person", ("{A} defeated {B}, the only other candidate, in the 2020 mayoral election in {T}.",
                            "In the 2020 mayoral election in {T}, {A} beat the only other candidate, {B}, by 900 "
                            "votes."),
     ("{A} won the 2020 mayoral election in {T}.", "{B} lost the 2020 mayoral election in {T} to {A}."),
     ("{B} won the 2020 mayoral election in {T}.", "{B} defeated {A} in the 2020 mayoral election in {T}.")),
    ("supplier", "engine_maker/fleet", ("{A} supplies the engines that {B} fits to its delivery vans.",
                         "{B} fits its delivery vans with engines supplied by {A}."),
     ("{B} buys the engines for its delivery vans from {A}.", "{A} is the supplier of the engines in {Bp} delivery "
                                                              "vans."),
     ("{A} buys the engines for its delivery vans from {B}.", "{B} supplies the engines that {A} fits to its "
                                                              "delivery vans.")),
)

# -- quantity frames: (id, subject type, sentence templates stating the same value, value range)
COUNT_FRAMES: tuple[tuple[str, str, tuple[str, ...], tuple[int, int]], ...] = (
    ("population", "town", ("{S} had a population of {N} at the 2020 census.", "{S} had {N} residents at the 2020 "
                                                                              "census.",
                            "At the 2020 census, {N} people lived in {S}."), (1200, 48000)),
    ("beds", "hospital", ("{S} has {N} beds.", "There are {N} beds at {S}.", "{S} can admit patients to {N} beds."),
     (80, 950)),
    ("enrolled", "trial", ("{S} enrolled {N} patients.", "{N} patients took part in {S}.",
                           "{S} recruited a total of {N} patients."), (120, 4800)),
    ("employees", "org", ("{S} employs {N} people.", "{S} has a workforce of {N}.", "{N} people work for {S}."),
     (140, 9800)),
    ("capacity", "stadium", ("{S} holds {N} spectators.", "{S} has a capacity of {N} spectators.",
                             "{S} can seat {N} spectators."), (4000, 62000)),
    ("homes_destroyed", "town", ("The 2019 wildfire near {S} destroyed {N} homes.",
                                 "{N} homes were destroyed by the 2019 wildfire near {S}.",
                                 "The 2019 wildfire near {S} burned down {N} homes."), (12, 900)),
    ("books", "library", ("The collection of {S} contains {N} books.", "{S} has {N} books in its collection.",
                        "There are {N} books in the collection of {S}."), (12000, 480000)),
)
YEAR_FRAMES: tuple[tuple[str, str, tuple[str, ...], tuple[int, int]], ...] = (
    ("completed", "structure", ("{S} was completed in {Y}.", "Construction of {S} was finished in {Y}.",
                                "Work on {S} was completed in {Y}."), (1850, 2015)),
    ("founded", "org", ("{S} was founded in {Y}.", "{S} was established in {Y}.", "{S} dates from {Y}, the year it "
                                                                                  "was founded."), (1890, 2012)),
    ("born_year", "person", ("{S} was born in {Y}.", "{Sp} year of birth is {Y}.", "{S} was born in the year {Y}."),
     (1931, 1995)),
    ("town_status", "town", ("{S} was granted town status in {Y}.", "{S} became a town in {Y}.",
                             "{S} received its town charter in {Y}."), (1820, 1990)),
    ("first_opened", "venue", ("{S} first opened to the public in {Y}.", "{S} opened its doors to the public for the "
                                                                         "first time in {Y}.",
                               "{S} welcomed its first visitors in {Y}."), (1880, 2010)),
)
DATE_FRAMES: tuple[tuple[str, str, tuple[str, ...], tuple[int, int]], ...] = (
    ("born_on", "person", ("{S} was born on {D}.", "{Sp} date of birth is {D}."), (1931, 1995)),
    ("accord", "town", ("The {S} Accord was signed on {D}.", "The signing of the {S} Accord took place on {D}."),
     (1850, 1990)),
    ("reopened", "venue", ("{S} reopened on {D}.", "{S} reopened to visitors on {D}."),
     (1990, 2019)),
    ("sworn_in", "person", ("{S} was sworn in as governor on {D}.", "{S} became governor on {D}."), (1960, 2019)),
    ("approved_on", "drug", ("Regulators approved {S} on {D}.", "{S} received regulatory approval on {D}."),
     (1995, 2021)),
)
# (id, subject type, template with {V}, value range, the same unit written otherwise, other units)
UNIT_FRAMES: tuple[tuple[str, str, str, tuple[int, int], tuple[str, ...], tuple[str, ...], str], ...] = (
    ("length_m", "structure", "{S} is {V} long.", (120, 2400), ("{n} m", "{n} meters"), ("{n} kilometres", "{n} feet"),
     "{n} metres"),
    ("trail_km", "town", "The coastal walking trail around {S} is {V} long.", (8, 95), ("{n} kilometres",
                                                                                        "{n} kilometers"),
     ("{n} miles", "{n} metres"), "{n} km"),
    ("sale_price", "org", "{S} was sold in 2019 for {V}.", (12, 950), ("{n} million US dollars",),
     ("US${n} billion", "{n} million euros"), "US${n} million"),
    ("record_heat", "town", "The highest temperature ever recorded in {S} is {V}.", (31, 44),
     ("{n} degrees Celsius",), ("{n} °F", "{n} degrees Fahrenheit"), "{n} °C"),
    ("dose", "drug", "The recommended daily dose of {S} is {V}.", (5, 400), ("{n} milligrams",),
     ("{n} g", "{n} grams"), "{n} mg"),
    ("ferry_time", "town", "The ferry crossing from {S} to the island takes {V}.", (20, 55), ("{n} min",),
     ("{n} hours",), "{n} minutes"),
)
PERCENT_FRAMES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("unemployment", "town", ("Unemployment in {S} fell to {X} in 2021.", "In 2021, unemployment in {S} dropped to "
                                                                          "{X}.")),
    ("revenue_growth", "org", ("{Sp} revenue grew by {X} in 2022.", "In 2022, {S} increased its revenue by {X}.")),
    ("response_rate", "drug", ("{S} worked in {X} of the patients who received it.",
                               "{S} was effective in {X} of treated patients.")),
    ("turnout", "town", ("Turnout in the 2021 local election in {S} was {X}.",
                         "In the 2021 local election in {S}, {X} of voters cast a ballot.")),
)
# passages that state a range: (id, subject type, passage with {A} {B}, claim with {Q} for a value or bound)
RANGE_PASSAGES: tuple[tuple[str, str, str, str, tuple[int, int]], ...] = (
    ("evacuated", "town", "Between {A} and {B} people were evacuated from {S} during the floods.",
     "{Q} people were evacuated from {S} during the floods.", (200, 3000)),
    ("rash", "drug", "Between {A} and {B} percent of patients taking {S} developed a rash.",
     "{Q} percent of patients taking {S} developed a rash.", (5, 30)),
    ("visitors", "venue", "{S} welcomed between {A} and {B} visitors a day last summer.",
     "{S} welcomed {Q} visitors a day last summer.", (300, 2400)),
)

# -- paraphrase frames: (id, passage, paraphrase, paraphrase of the opposite (no negation word))
PARA_FRAMES: tuple[tuple[str, str, str, str], ...] = (
    ("revenue_doubled", "{O} more than doubled its revenue between 2018 and 2022.",
     "{Op} revenue in 2022 was over twice what it had been in 2018.",
     "{Op} revenue shrank between 2018 and 2022."),
    ("blood_pressure", "{D} lowered blood pressure in most of the patients who took it.",
     "Most patients who took {D} saw their blood pressure fall.",
     "Most patients who took {D} saw their blood pressure rise."),
    ("marathon_postponed", "Heavy rain forced the organisers to postpone the {T} marathon.",
     "The {T} marathon was put off because of heavy rain.",
     "The {T} marathon went ahead as planned despite heavy rain."),
    ("demolished", "{B} was demolished in 1998 to make way for a shopping centre.",
     "In 1998 {B} was torn down so that a shopping centre could be built.",
     "{B} still stands today, having escaped demolition in 1998."),
    ("parking_fees", "The council voted to raise parking fees in {T} by 20 percent.",
     "Parking in {T} became 20 percent more expensive after a council vote.",
     "The council voted to cut parking fees in {T} by 20 percent."),
    ("electric_cars", "In 2021, for the first time, more electric cars than diesel cars were sold in {T}.",
     "Electric cars outsold diesel cars in {T} in 2021.",
     "In 2021, diesel cars still outsold electric cars in {T}."),
    ("sleep_school", "{R} found that children who slept fewer than eight hours a night did worse at school.",
     "According to {R}, children getting under eight hours of sleep a night performed less well at school.",
     "According to {R}, children getting under eight hours of sleep a night performed better at school."),
    ("merger", "{O} merged with its main rival in 2009.",
     "In 2009, {O} and its biggest competitor combined into one company.",
     "{O} broke off merger talks with its main rival in 2009 and stayed independent."),
    ("alcohol", "Doctors advise patients taking {D} to avoid alcohol.",
     "Patients on {D} are told by their doctors to stay away from alcohol.",
     "Doctors tell patients on {D} that drinking alcohol is fine."),
    ("new_wing", "{Lp} new wing doubled its exhibition space.",
     "Thanks to its new wing, {L} now has twice as much exhibition space.",
     "The new wing reduced {Lp} exhibition space."),
    ("wide_margin", "{P} won the election by a wide margin.",
     "{P} won the election comfortably.",
     "{P} narrowly lost the election."),
    ("cracks", "{B} was closed after inspectors found cracks in its supports.",
     "Inspectors discovered cracked supports, so {B} was shut.",
     "{B} stayed open after inspectors found its supports in good condition."),
    ("wheat_prices", "Wheat prices in {T} rose sharply after the drought of 2012.",
     "The 2012 drought was followed by a steep increase in wheat prices in {T}.",
     "Wheat prices in {T} fell steeply after the drought of 2012."),
    ("factory_move", "{O} moved its factory from {C1} to {C2} in 2017.",
     "In 2017 {O} relocated its factory to {C2}, leaving {C1}.",
     "In 2017 {O} moved its factory from {C2} to {C1}."),
    ("teen_vaccination", "Vaccination rates among teenagers in {T} have fallen since 2015.",
     "Since 2015, a smaller share of teenagers in {T} have been vaccinated.",
     "Vaccination rates among teenagers in {T} have climbed since 2015."),
    ("head_cardiology", "{P} was appointed head of the cardiology department at {H} in 2018.",
     "In 2018, {H} made {P} the head of its cardiology department.",
     "In 2018, {H} passed over {P} and gave the job of head of cardiology to someone else."),
    ("power_cut", "The storm left 40,000 homes in {T} without electricity.",
     "Because of the storm, 40,000 households in {T} lost power.",
     "The storm caused little damage in {T}, and every home kept its electricity."),
    ("blocks_protein", "{D} works by blocking a protein that helps the virus enter cells.",
     "{D} stops the virus getting into cells by blocking a protein the virus needs.",
     "{D} works by strengthening a protein that helps the virus enter cells."),
    ("ticket_sales", "Ticket sales at {L} have increased every year since 2016.",
     "Since 2016, {L} has sold more tickets each year than the year before.",
     "Ticket sales at {L} have dropped every year since 2016."),
    ("north_of", "{T1} lies to the north of {T2}.",
     "{T2} is south of {T1}.",
     "{T1} lies to the south of {T2}."),
    ("larger_revenue", "By revenue, {O} is larger than {O2}.",
     "By revenue, {O2} is smaller than {O}.",
     "By revenue, {O2} is larger than {O}."),
    ("runway", "The committee rejected the proposal to extend the runway at the {T} airport.",
     "The plan to lengthen the runway at the {T} airport was turned down by the committee.",
     "The committee approved the proposal to extend the runway at the {T} airport."),
    ("critic", "{P} was a vocal critic of the new housing law.",
     "{P} publicly criticised the new housing law.",
     "{P} was one of the most vocal supporters of the new housing law."),
    ("waiting_times", "Waiting times at {H} have shortened since the new clinic opened.",
     "Since the new clinic opened, patients at {H} wait less.",
     "Waiting times at {H} have grown longer since the new clinic opened."),
    ("pay_below", "{O} paid its workers in {T} less than the regional average.",
     "{Op} workers in {T} earned below the regional average.",
     "{O} paid its workers in {T} more than the regional average."),
    ("cycle_commute", "Most residents of {T} commute to work by bicycle.",
     "The majority of the people living in {T} cycle to work.",
     "Only a small minority of the people living in {T} cycle to work."),
    ("inherited", "{P} inherited the family bakery from a grandparent in 1994.",
     "In 1994 the family bakery passed to {P} from a grandparent.",
     "{P} founded the family bakery from scratch in 1994."),
    ("fire_spread", "The fire started in the kitchen of {L} and spread to the upper floors.",
     "The blaze began in the kitchen of {L} and moved up to the higher floors.",
     "The fire started on the upper floors of {L} and spread down to the kitchen."),
    ("olive_exports", "Exports of olive oil from {T} tripled over the decade.",
     "Over the decade, {T} came to export three times as much olive oil.",
     "Over the decade, olive oil exports from {T} fell to a third of their earlier level."),
    ("norovirus", "Symptoms of norovirus usually appear within two days of infection.",
     "People infected with norovirus typically develop symptoms within 48 hours.",
     "Symptoms of norovirus usually take several weeks to appear after infection."),
    ("moved_child", "{P} moved to {C1} as a child and grew up there.",
     "{P} grew up in {C1}, having moved there at a young age.",
     "{P} only moved to {C1} late in life, after retiring."),
    ("lower_prices", "{O} lowered its prices after sales fell in 2023.",
     "After a fall in sales in 2023, {O} cut its prices.",
     "After a fall in sales in 2023, {O} raised its prices."),
)
STUDIES = ("a 2019 study from the University of Tartu", "a national sleep survey of 12,000 children",
           "a long-running study of schoolchildren in Bergen")

# ---------------------------------------------------------------------------------------
# text helpers


def possessive(name: str) -> str:
    """``Velcor Industries'`` / ``Amelia Okafor's``."""
    return name + ("'" if name.endswith("s") else "'s")


def render(template: str, *, start: bool = True, **slots: str) -> str:
    """``template`` filled (``{S}`` etc., plus ``{Sp}`` for the possessive of ``S``), as a
    sentence (capitalised, final full stop) or, with ``start=False``, a clause to embed."""
    values = dict(slots)
    for k, v in slots.items():
        values.setdefault(k + "p", possessive(v))
    text = template.format(**values)
    if start:
        text = text[:1].upper() + text[1:]
        return text if text.endswith((".", "!", "?")) else text + "."
    if not template.startswith("{"):
        text = text[:1].lower() + text[1:]
    return text.rstrip(".")


def sentence(template: str, **slots: str) -> str:
    return render(template, start=True, **slots)


def clause(template: str, **slots: str) -> str:
    return render(template, start=False, **slots)


NEGATION_CUES = re.compile(r"\b(not|no|never|none|nobody|nothing|neither|nor|without|cannot)\b|n't\b", re.I)


def has_negation(text: str) -> bool:
    """Whether ``text`` holds a negation cue (not, no, never, n't, none, neither, nor, without ...)."""
    return bool(NEGATION_CUES.search(text))


def fmt_int(n: int, comma: bool = True) -> str:
    return f"{n:,}" if comma else str(n)


def parse_int(text: str) -> int:
    """The integer written as ``3,559`` / ``3559``."""
    return int(text.replace(",", ""))


def near_int(n: int, rng: random.Random) -> int:
    """A different count "one step off": one digit changed, a few percent up or down, or two
    neighbouring digits swapped; same number of digits, never ``n``."""
    s = str(n)
    for _ in range(50):
        how = rng.choice(("digit", "percent", "swap"))
        if how == "digit":
            i = rng.randrange(1 if len(s) > 1 else 0, len(s))
            m = int(s[:i] + rng.choice([c for c in "0123456789" if c != s[i]]) + s[i + 1:])
        elif how == "percent":
            m = n + rng.choice((-1, 1)) * max(1, round(n * rng.uniform(0.02, 0.12)))
        else:
            if len(s) < 2:
                continue
            i = rng.randrange(len(s) - 1)
            m = int(s[:i] + s[i + 1] + s[i] + s[i + 2:])
        if m != n and m > 0 and len(str(m)) == len(s):
            return m
    return n + 1 if len(str(n + 1)) == len(s) else n - 1


def near_year(y: int, rng: random.Random) -> int:
    """Another year, one to three off."""
    return y + rng.choice((-3, -2, -1, 1, 2, 3))


MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
DATE_STYLES = ("dmy", "mdy", "ordinal")


def fmt_date(d: dt.date, style: str) -> str:
    """``7 November 1867`` (dmy), ``November 7, 1867`` (mdy), ``the 7th of November 1867`` (ordinal)."""
    month = MONTHS[d.month - 1]
    if style == "dmy":
        return f"{d.day} {month} {d.year}"
    if style == "mdy":
        return f"{month} {d.day}, {d.year}"
    if style == "ordinal":
        suffix = "th" if 11 <= d.day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(d.day % 10, "th")
        return f"the {d.day}{suffix} of {month} {d.year}"
    raise ValueError(f"unknown date style {style!r}; allowed: {', '.join(DATE_STYLES)}")


def parse_date(text: str) -> dt.date:
    """The date written by :func:`fmt_date` in any style."""
    m = re.fullmatch(r"(?:the )?(\d{1,2})(?:st|nd|rd|th)?(?: of)? (\w+) (\d{4})", text)
    if m:
        return dt.date(int(m[3]), MONTHS.index(m[2]) + 1, int(m[1]))
    m = re.fullmatch(r"(\w+) (\d{1,2}), (\d{4})", text)
    if not m:
        raise ValueError(f"not a date written by fmt_date: {text!r}")
    return dt.date(int(m[3]), MONTHS.index(m[1]) + 1, int(m[2]))


def near_date(d: dt.date, rng: random.Random) -> dt.date:
    """The same year and month with the day one to three off, or the same day with the month one off."""
    if rng.random() < 0.6:
        days = [d.day + k for k in (-3, -2, -1, 1, 2, 3) if 1 <= d.day + k <= 28]
        return d.replace(day=rng.choice(days))
    month = d.month + (1 if d.month == 1 else -1 if d.month == 12 else rng.choice((-1, 1)))
    return d.replace(month=month)


def near_percent(x: float, rng: random.Random) -> float:
    """Another percentage: digits swapped (4.5 -> 5.4) or 0.3-1.9 points off."""
    a, b = f"{x:.1f}".replace(".", "")[-2:]
    if a != b and rng.random() < 0.4 and len(f"{x:.1f}") == 3:
        return float(f"{b}.{a}")
    return round(x + rng.choice((-1, 1)) * rng.choice((0.3, 0.5, 0.8, 1.2, 1.9)), 1)


def round_bounds(n: int) -> tuple[int, int, int]:
    """``(below, above, step)``: round numbers just below and just above ``n`` (two significant digits)."""
    step = 10 ** max(0, len(str(n)) - 2)
    below = (n // step) * step
    if below == n:
        below -= step
    return below, (n // step + 1) * step, step


# ---------------------------------------------------------------------------------------
# facts: one statement about one subject, with statements that support and contradict it


@dataclass(frozen=True)
class Fact:
    """A statement about ``subject``: true variants (each supports the others), false
    variants (each contradicts them) and the frame it came from."""

    kind: str
    frame: str
    stype: str
    subject: str
    true: tuple[str, ...]
    false: tuple[str, ...]
    claims: tuple[str, ...]  # the true variants that state exactly the fact (no extra detail): usable as claims
    predicate: str | None  # a claim without its leading subject, for compound claims
    false_claims: tuple[str, ...] = ()

    def contradiction(self, rng: random.Random) -> tuple[str, str]:
        """A (claim, passage) pair that contradict each other. For an entity fact the claim
        names the wrong entity and the passage the right one ("the capital of Australia is
        Sydney" vs "Canberra is the capital of Australia"), so a passage is never false
        about the real world; otherwise the claim is true and the passage changes it."""
        if self.kind == "entity":
            return rng.choice(self.false_claims), rng.choice(self.true[len(self.claims):])
        return rng.choice(self.claims), rng.choice(self.false)

    def statements(self) -> tuple[str, ...]:
        """What may be said of this subject as background: negation facts either way; the
        others only as true (a wrong capital or a wrong year is not background text)."""
        return self.true + self.false if self.kind == "negation" else self.true

    @property
    def domain(self) -> str:
        return DOMAIN[self.stype]


FACT_KINDS = ("negation", "entity", "count", "year")


def _pick(rng: random.Random, pool: Sequence[str], avoid: Iterable[str] = ()) -> str:
    bad = set(avoid)
    options = [x for x in pool if x not in bad]
    if not options:
        raise LookupError(f"every name of the pool is excluded ({len(pool)} names)")
    return rng.choice(options)


def _predicate(subject: str, variants: Iterable[str]) -> str | None:
    cap = subject[:1].upper() + subject[1:]
    for v in variants:
        if v.startswith(cap + " ") and "," not in v:
            return v[len(cap) + 1:].rstrip(".")
    return None


def make_fact(kind: str, rng: random.Random, *, avoid: Iterable[str] = (), frame: str | None = None) -> Fact:
    """A random fact of ``kind`` (negation frame, entity frame, count or year frame) whose
    subject and entities are none of ``avoid``; ``frame`` picks the frame by id."""
    avoid = set(avoid)
    if kind == "negation":
        f = next(x for x in NEG_FRAMES if x[0] == frame) if frame else rng.choice(NEG_FRAMES)
        fid, stype, pos, neg, neg_alts, pos_alts, _ = f
        s = _pick(rng, POOLS[stype], avoid)
        true = tuple(sentence(t, S=s) for t in (pos, *pos_alts))
        false = tuple(sentence(t, S=s) for t in (neg, *neg_alts))
        return Fact(kind, fid, stype, s, true, false, true, _predicate(s, true))
    if kind == "entity":
        f = next(x for x in ENTITY_FRAMES if x[0] == frame) if frame else rng.choice(ENTITY_FRAMES)
        fid, _etype, stype, epool, passages, claims = f
        s = _pick(rng, POOLS[stype], avoid)
        if epool == "capital":
            _, e, others = next(c for c in COUNTRIES if c[0] == s)
            e2 = rng.choice(others)
        else:
            e = _pick(rng, POOLS[epool], avoid | {s})
            e2 = _pick(rng, POOLS[epool], avoid | {s, e})
        true = tuple(sentence(t, S=s, E=e) for t in (*claims, *passages))
        false = tuple(sentence(t, S=s, E=e2) for t in (*claims, *passages))
        return Fact(kind, fid, stype, s, true, false, true[:len(claims)], _predicate(s, true[:len(claims)]),
                    false[:len(claims)])
    if kind == "count":
        f = next(x for x in COUNT_FRAMES if x[0] == frame) if frame else rng.choice(COUNT_FRAMES)
        fid, stype, templates, (lo, hi) = f
        s = _pick(rng, POOLS[stype], avoid)
        n = rng.randint(lo, hi)
        m = near_int(n, rng)
        true = tuple(sentence(t, S=s, N=fmt_int(n)) for t in templates)
        false = tuple(sentence(t, S=s, N=fmt_int(m)) for t in templates)
        return Fact(kind, fid, stype, s, true, false, true, _predicate(s, true))
    if kind == "year":
        f = next(x for x in YEAR_FRAMES if x[0] == frame) if frame else rng.choice(YEAR_FRAMES)
        fid, stype, templates, (lo, hi) = f
        s = _pick(rng, POOLS[stype], avoid)
        y = rng.randint(lo, hi)
        y2 = near_year(y, rng)
        true = tuple(sentence(t, S=s, Y=str(y)) for t in templates)
        false = tuple(sentence(t, S=s, Y=str(y2)) for t in templates)
        return Fact(kind, fid, stype, s, true, false, true, _predicate(s, true))
    raise ValueError(f"unknown fact kind {kind!r}; allowed: {', '.join(FACT_KINDS)}")


def frames_of(kind: str) -> tuple[str, ...]:
    table = {"negation": NEG_FRAMES, "entity": ENTITY_FRAMES, "count": COUNT_FRAMES, "year": YEAR_FRAMES}[kind]
    return tuple(f[0] for f in table)


def cycle_frames(kind: str, n: int, rng: random.Random) -> list[str]:
    """``n`` frame ids of ``kind``, each used about equally often, in random order."""
    ids = list(frames_of(kind))
    out: list[str] = []
    while len(out) < n:
        rng.shuffle(ids)
        out += ids
    return out[:n]


def mentions(text: str, names: Iterable[str]) -> bool:
    """Whether ``text`` names any of ``names`` (case-insensitive; "the X" also matches "X")."""
    low = text.lower()
    for name in names:
        core = name.lower().removeprefix("the ")
        if core and core in low:
            return True
    return False


STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or but is are was were be been has have had it its this that "
    "these those as after before during since than then there their them they he she his her who which what "
    "when where while not no never did does do into over under about more most less also can could will would "
    "all any each every some such only so very just one two three first new".split())


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 2 and w not in STOPWORDS}


# ---------------------------------------------------------------------------------------
# templated probes, one generator per capability


class _Builder:
    """Collects the probes of one capability, numbering them."""

    def __init__(self, capability: str):
        self.capability = capability
        self.probes: list[Probe] = []

    def add(self, direction: str, claim: str, passage: str, source: str, *, document: bool = False,
            origin: str = "templated", label: str | None = None, **meta: Any) -> None:
        gold = label or DIRECTIONS[self.capability][direction][0]
        pid = f"{self.capability}.{origin[0]}{len(self.probes):03d}"
        self.probes.append(Probe(pid, self.capability, direction, gold, claim, passage, source, origin, document,
                                 meta))


def negation_probes(rng: random.Random, per_direction: int = 22, double: int = 12) -> list[Probe]:
    """(a)-(d) ``per_direction`` probes each, cycling over the negation frames; (e) ``double`` each way."""
    b = _Builder("negation")
    by_id = {f[0]: f for f in NEG_FRAMES}
    for direction in ("a_neg_claim_neg_evidence", "b_aff_claim_neg_evidence", "c_neg_claim_aff_evidence",
                      "d_aff_claim_negation_elsewhere"):
        for fid in cycle_frames("negation", per_direction, rng):
            _, stype, pos, neg, neg_alts, pos_alts, extra = by_id[fid]
            s = rng.choice(POOLS[stype])
            if direction == "a_neg_claim_neg_evidence":
                ev = rng.choice(neg_alts)
                b.add(direction, sentence(neg, S=s), sentence(ev, S=s), f"template negation.{fid}")
            elif direction == "b_aff_claim_neg_evidence":
                ev = rng.choice((neg, *neg_alts))
                b.add(direction, sentence(pos, S=s), sentence(ev, S=s), f"template negation.{fid}")
            elif direction == "c_neg_claim_aff_evidence":
                ev = rng.choice(pos_alts)
                b.add(direction, sentence(neg, S=s), sentence(ev, S=s), f"template negation.{fid}")
            else:  # the evidence affirms; a negation about something else follows in the same or the next sentence
                ev = sentence(rng.choice((pos, *pos_alts)), S=s)
                if rng.random() < 0.5:
                    passage = f"{ev[:-1]}, {rng.choice(('but', 'although'))} {extra}."
                else:
                    passage = f"{ev} {extra[:1].upper() + extra[1:]}."
                b.add(direction, sentence(pos, S=s), passage, f"template negation.{fid}")
    prefixes = ("It is not true that", "It is not the case that", "It is false that")
    for direction in ("e_double_negation_support", "e_double_negation_contradict"):
        for k, fid in enumerate(cycle_frames("negation", double, rng)):
            _, stype, pos, neg, neg_alts, pos_alts, _ = by_id[fid]
            s = rng.choice(POOLS[stype])
            double_neg = f"{rng.choice(prefixes)} {clause(neg, S=s)}."
            in_claim = k % 2 == 0  # half with the double negation in the claim, half in the evidence
            if direction == "e_double_negation_support":
                claim, ev = (double_neg, sentence(rng.choice(pos_alts), S=s)) if in_claim else \
                    (sentence(pos, S=s), double_neg)
            else:
                claim, ev = (double_neg, sentence(rng.choice(neg_alts), S=s)) if in_claim else \
                    (sentence(neg, S=s), double_neg)
            b.add(direction, claim, ev, f"template negation.{fid}.double_in_{'claim' if in_claim else 'evidence'}")
    return b.probes


def number_probes(rng: random.Random, per_direction: int = 11) -> list[Probe]:
    """Counts, years, dates, units, percentages and ranges: the same value (reworded or
    reformatted) → SUPPORT, one step off → CONTRADICT."""
    b = _Builder("numbers")
    for lab in (SUPPORT, CONTRADICT):
        d = lab.lower()
        for i in range(per_direction):  # counts
            fid, stype, templates, (lo, hi) = COUNT_FRAMES[i % len(COUNT_FRAMES)]
            s, n = rng.choice(POOLS[stype]), rng.randint(lo, hi)
            t_pass, t_claim = rng.sample(templates, 2)
            value = n if lab == SUPPORT else near_int(n, rng)
            comma = not (lab == SUPPORT and n >= 1000 and rng.random() < 0.5)  # 3559 vs 3,559
            b.add(f"{d}_count", sentence(t_claim, S=s, N=fmt_int(value, comma)), sentence(t_pass, S=s, N=fmt_int(n)),
                  f"template numbers.count.{fid}", value=n, claimed=value)
        for i in range(per_direction):  # years
            fid, stype, templates, (lo, hi) = YEAR_FRAMES[i % len(YEAR_FRAMES)]
            s, y = rng.choice(POOLS[stype]), rng.randint(lo, hi)
            t_pass, t_claim = rng.sample(templates, 2)
            value = y if lab == SUPPORT else near_year(y, rng)
            b.add(f"{d}_year", sentence(t_claim, S=s, Y=str(value)), sentence(t_pass, S=s, Y=str(y)),
                  f"template numbers.year.{fid}", value=y, claimed=value)
        for i in range(per_direction):  # dates
            fid, stype, templates, (lo, hi) = DATE_FRAMES[i % len(DATE_FRAMES)]
            s = rng.choice(POOLS[stype])
            day = dt.date(rng.randint(lo, hi), rng.randint(1, 12), rng.randint(1, 28))
            st_pass, st_claim = rng.sample(DATE_STYLES, 2)
            value = day if lab == SUPPORT else near_date(day, rng)
            t_pass, t_claim = (rng.choice(templates), rng.choice(templates))
            b.add(f"{d}_date", sentence(t_claim, S=s, D=fmt_date(value, st_claim)),
                  sentence(t_pass, S=s, D=fmt_date(day, st_pass)), f"template numbers.date.{fid}",
                  value=day.isoformat(), claimed=value.isoformat())
        for i in range(per_direction):  # units
            fid, stype, tpl, (lo, hi), same, other, unit = UNIT_FRAMES[i % len(UNIT_FRAMES)]
            s, n = rng.choice(POOLS[stype]), rng.randint(lo, hi)
            alt = rng.choice(same if lab == SUPPORT else other)
            b.add(f"{d}_unit", sentence(tpl, S=s, V=alt.format(n=fmt_int(n))),
                  sentence(tpl, S=s, V=unit.format(n=fmt_int(n))), f"template numbers.unit.{fid}",
                  unit=unit.format(n="N"), claimed_unit=alt.format(n="N"))
        for i in range(per_direction):  # percentages
            fid, stype, templates = PERCENT_FRAMES[i % len(PERCENT_FRAMES)]
            s, x = rng.choice(POOLS[stype]), round(rng.uniform(2.1, 14.9), 1)
            if fid in ("response_rate", "turnout"):
                x = round(rng.uniform(21.0, 78.0), 1)
            t_pass, t_claim = rng.sample(templates, 2)
            value = x if lab == SUPPORT else near_percent(x, rng)
            word = rng.choice(("percent", "per cent")) if lab == SUPPORT else None
            claimed = f"{value:.1f} {word}" if word else f"{value:.1f}%"
            b.add(f"{d}_percent", sentence(t_claim, S=s, X=claimed), sentence(t_pass, S=s, X=f"{x:.1f}%"),
                  f"template numbers.percent.{fid}", value=x, claimed=value)
        for i in range(per_direction):  # ranges and bounds
            if i % 3 == 2:  # the passage gives a range
                fid, stype, p_tpl, c_tpl, (lo, hi) = RANGE_PASSAGES[(i // 3) % len(RANGE_PASSAGES)]
                s = rng.choice(POOLS[stype])
                a = rng.randint(lo, hi)
                _, _, step = round_bounds(a)
                a = (a // step) * step
                bb = a + step * rng.choice((2, 3, 5))
                if lab == SUPPORT:
                    q = rng.choice((f"more than {fmt_int(a - step)}", f"fewer than {fmt_int(bb + step)}"))
                else:
                    q = rng.choice((fmt_int(bb + step * rng.choice((1, 2))), fmt_int(max(1, a - step))))
                    q = rng.choice((q, f"more than {fmt_int(bb + step)}", f"fewer than {fmt_int(a)}"))
                if fid == "rash" and q.startswith("fewer"):
                    q = q.replace("fewer", "less")
                b.add(f"{d}_range", sentence(c_tpl, S=s, Q=q), sentence(p_tpl, S=s, A=fmt_int(a), B=fmt_int(bb)),
                      f"template numbers.range.{fid}", range=[a, bb], claimed=q)
                continue
            fid, stype, templates, (lo, hi) = COUNT_FRAMES[i % len(COUNT_FRAMES)]
            s, n = rng.choice(POOLS[stype]), rng.randint(lo, hi)
            below, above, step = round_bounds(n)
            if lab == SUPPORT:
                q = rng.choice((f"more than {fmt_int(below)}", f"fewer than {fmt_int(above)}",
                                f"between {fmt_int(below)} and {fmt_int(above + step)}"))
            else:
                q = rng.choice((f"more than {fmt_int(above)}", f"fewer than {fmt_int(below)}",
                                f"between {fmt_int(above)} and {fmt_int(above + 4 * step)}",
                                f"between {fmt_int(max(step, below - 4 * step))} and {fmt_int(below)}"))
            t_pass, t_claim = rng.sample(templates, 2)
            b.add(f"{d}_range", sentence(t_claim, S=s, N=q), sentence(t_pass, S=s, N=fmt_int(n)),
                  f"template numbers.range.{fid}", value=n, claimed=q)
    return b.probes


def entity_probes(rng: random.Random, per_direction: int = 16) -> list[Probe]:
    """Another entity in the same slot → CONTRADICT; the same one, reworded → SUPPORT; two
    named parties with their roles swapped → CONTRADICT, kept → SUPPORT. The subject
    never changes (a claim about another subject would be IRRELEVANT)."""
    b = _Builder("entities")
    for etype in ("place", "person", "organisation"):
        frames = [f for f in ENTITY_FRAMES if f[1] == etype]
        for lab in (SUPPORT, CONTRADICT):
            for i in range(per_direction):
                fid = frames[i % len(frames)][0]
                fact = make_fact("entity", rng, frame=fid)
                frame = next(f for f in ENTITY_FRAMES if f[0] == fid)
                n_claims = len(frame[5])
                if lab == SUPPORT:
                    claim = rng.choice(fact.claims)
                    passage = rng.choice([t for t in fact.true[n_claims:] if t != claim])
                else:
                    claim, passage = fact.contradiction(rng)
                b.add(f"{lab.lower()}_{etype}", claim, passage, f"template entities.{fid}")
    for lab in (SUPPORT, CONTRADICT):
        for i in range(per_direction):
            fid, pool, passages, keep, swap = ROLE_FRAMES[i % len(ROLE_FRAMES)]
            if pool == "engine_maker/fleet":
                a, bb = rng.choice(ENGINE_MAKERS), rng.choice(FLEETS)
            else:
                a, bb = rng.sample(POOLS[pool], 2)
            t = rng.choice(TOWNS)
            passage = sentence(rng.choice(passages), A=a, B=bb, T=t)
            claim = sentence(rng.choice(keep if lab == SUPPORT else swap), A=a, B=bb, T=t)
            b.add(f"{lab.lower()}_role", claim, passage, f"template entities.role.{fid}")
    return b.probes


def _distractors(domain: str | None = None, exclude: str | None = None) -> list[tuple[str, str]]:
    return [(d, s) for d, ss in DISTRACTORS.items() if (domain is None or d == domain) and d != exclude for s in ss]


def off_topic_probes(rng: random.Random, per_direction: int = 28, controls: int = 14) -> list[Probe]:
    """Passages that say nothing about the claim → IRRELEVANT, four ways; plus on-topic
    controls (SUPPORT, CONTRADICT) so that answering IRRELEVANT to everything fails."""
    b = _Builder("off_topic")
    kinds = [k for _ in range(per_direction) for k in FACT_KINDS][:per_direction]

    def claim_fact(kind: str) -> Fact:
        return make_fact(kind, rng)

    for kind in kinds:  # the same statement about another subject
        f = claim_fact(kind)
        other = make_fact(kind, rng, avoid=_fact_names(f), frame=f.frame)
        b.add("other_subject_same_attribute", rng.choice(f.claims), rng.choice(other.statements()),
              f"template off_topic.other_subject.{kind}.{f.frame}")
    for kind in kinds:  # same domain, shared words, another subject
        best = 0
        while not best:  # a claim for which some same-domain passage shares a content word
            f = claim_fact(kind)
            claim = rng.choice(f.claims)
            pool = [s for _, s in _distractors(f.domain)]
            for k2 in FACT_KINDS:
                for fid in frames_of(k2):
                    try:
                        g = make_fact(k2, rng, avoid=_fact_names(f), frame=fid)
                    except LookupError:
                        continue
                    if g.domain == f.domain and g.frame != f.frame:
                        pool.append(rng.choice(g.statements()))
            pool = [p for p in pool if not mentions(p, _fact_names(f))]
            words = content_words(claim)
            best = max(len(words & content_words(p)) for p in pool)
        passage = rng.choice([p for p in pool if len(words & content_words(p)) == best])
        b.add("same_domain_shared_words", claim, passage, f"template off_topic.same_domain.{kind}.{f.frame}",
              shared_words=sorted(words & content_words(passage)))
    for kind in kinds:  # another domain
        f = claim_fact(kind)
        if rng.random() < 0.5:
            passage = rng.choice(_distractors(exclude=f.domain))[1]
        else:
            while True:
                g = make_fact(rng.choice(FACT_KINDS), rng, avoid=_fact_names(f))
                if g.domain != f.domain:
                    break
            passage = rng.choice(g.statements())
        b.add("other_domain", rng.choice(f.claims), passage, f"template off_topic.other_domain.{kind}.{f.frame}")
    for kind in kinds:  # same subject, another attribute
        f = claim_fact(kind)
        while f.stype not in NEUTRAL:
            f = claim_fact(kind)
        attr = rng.choice(NEUTRAL[f.stype])
        b.add("same_entity_other_attribute", rng.choice(f.claims), sentence("{S} " + attr, S=f.subject),
              f"template off_topic.same_entity.{kind}.{f.frame}")
    for direction, lab in (("control_support", SUPPORT), ("control_contradict", CONTRADICT)):
        for kind in kinds[:controls]:
            f = claim_fact(kind)
            claim = rng.choice(f.claims)
            if lab == CONTRADICT:
                claim, passage = f.contradiction(rng)
            else:
                passage = rng.choice([t for t in f.true if t != claim])
            b.add(direction, claim, passage,
                  f"template off_topic.control.{kind}.{f.frame}")
    return b.probes


def _fact_names(f: Fact) -> set[str]:
    """The subject and the other named things of a fact's statements (to keep them out of
    off-topic passages)."""
    names = {f.subject}
    for pool in (PEOPLE, ORGS, PHARMA, CITIES, TOWNS):
        names |= {x for x in pool if any(x in t for t in f.true + f.false)}
    return names


def paraphrase_probes(rng: random.Random, per_frame: int = 2) -> list[Probe]:
    """A paraphrase of the passage → SUPPORT; a paraphrase of its opposite (antonym,
    converse, reversed direction; no negation word) → CONTRADICT."""
    b = _Builder("paraphrase")
    for fid, passage, same, opposite in PARA_FRAMES:
        for _ in range(per_frame):
            for direction, tpl in (("paraphrase_support", same), ("opposite_contradict", opposite)):
                o, o2 = rng.sample(ORGS, 2)
                t1, t2 = rng.sample(TOWNS, 2)
                c1, c2 = rng.sample(CITIES, 2)
                slots = dict(O=o, O2=o2, T=t1, T1=t1, T2=t2, C1=c1, C2=c2, P=rng.choice(PEOPLE),
                             D=rng.choice(DRUGS), B=rng.choice(STRUCTURES), L=rng.choice(VENUES),
                             H=rng.choice(HOSPITALS), R=rng.choice(STUDIES))
                b.add(direction, sentence(tpl, **slots), sentence(passage, **slots), f"template paraphrase.{fid}")
    return b.probes


def partial_probes(rng: random.Random, per_direction: int = 50) -> list[Probe]:
    """"S did A and B": the passage supports A and says nothing of B → SUPPORT (partial
    support counts); the passage contradicts A and says nothing of B → CONTRADICT."""
    b = _Builder("partial")
    for direction in ("supported_part", "contradicted_part"):
        made = 0
        while made < per_direction:
            kind = FACT_KINDS[made % len(FACT_KINDS)]
            f = make_fact(kind, rng)
            if f.predicate is None or f.stype not in NEUTRAL:
                continue
            attr = rng.choice(NEUTRAL[f.stype])
            parts = [f.predicate, attr] if rng.random() < 0.6 else [attr, f.predicate]
            claim = sentence("{S} " + f"{parts[0]} and {parts[1]}", S=f.subject)
            stated = f"{sentence('{S}', S=f.subject)[:-1]} {f.predicate}."
            pool = [t for t in (f.true if direction == "supported_part" else f.false) if t != stated] or list(f.true)
            b.add(direction, claim, rng.choice(pool), f"template partial.{kind}.{f.frame}", silent_part=attr)
            made += 1
    return b.probes


def long_document_probes(rng: random.Random, per_direction: int = 40) -> list[Probe]:
    """One supporting or contradicting sentence among 16-24 off-topic sentences (other
    subjects, the same domain among them), or none; judged as one document by the engine."""
    b = _Builder("long_document")
    positions = ("start", "middle", "end")
    for direction in ("support_in_long", "contradict_in_long", "none_in_long"):
        for i in range(per_direction):
            kind = FACT_KINDS[i % len(FACT_KINDS)]
            f = make_fact(kind, rng)
            claim = rng.choice(f.claims)
            support = rng.choice([t for t in f.true if t != claim])
            names = _fact_names(f)
            n = rng.randint(16, 24)
            filler: list[str] = []
            same_domain = [s for _, s in _distractors(f.domain)]
            used = set(names)  # each filler subject once: the filler never contradicts itself
            while len(filler) < n:
                r = rng.random()
                if r < 0.35:
                    cand = rng.choice(_distractors())[1]
                elif r < 0.5 and same_domain:
                    cand = rng.choice(same_domain)
                else:
                    k2 = rng.choice(FACT_KINDS)
                    try:
                        g = make_fact(k2, rng, avoid=used,
                                      frame=f.frame if k2 == kind and rng.random() < 0.3 else None)
                    except LookupError:
                        continue
                    cand = rng.choice(g.statements())
                    if not mentions(cand, used):
                        used |= _fact_names(g) - set(CITIES)
                if cand not in filler and not mentions(cand, names):
                    filler.append(cand)
            pos = positions[i % 3]
            meta: dict[str, Any] = {"sentences": n}
            if direction == "contradict_in_long":
                claim, relevant = f.contradiction(rng)
            if direction != "none_in_long":
                relevant = support if direction == "support_in_long" else relevant
                at = {"start": rng.randint(0, 2), "middle": n // 2 + rng.randint(-2, 2),
                      "end": n - rng.randint(0, 2)}[pos]
                filler.insert(at, relevant)
                meta.update(position=pos, relevant_sentence=at, relevant=relevant)
            paras, k = [], 0
            while k < len(filler):
                size = rng.randint(4, 7)
                paras.append(" ".join(filler[k:k + size]))
                k += size
            b.add(direction, claim, "\n\n".join(paras), f"template long_document.{kind}.{f.frame}", document=True,
                  **meta)
    return b.probes


GENERATORS: dict[str, Callable[[random.Random], list[Probe]]] = {
    "negation": negation_probes, "numbers": number_probes, "entities": entity_probes,
    "off_topic": off_topic_probes, "paraphrase": paraphrase_probes, "partial": partial_probes,
    "long_document": long_document_probes,
}


def templated_probes(seed: int, capabilities: Sequence[str] = CAPABILITIES) -> dict[str, list[Probe]]:
    """The templated probes of each capability; the same for the same seed."""
    return {c: GENERATORS[c](random.Random(f"{seed}:{c}")) for c in capabilities}


# ---------------------------------------------------------------------------------------
# mined probes: evaluation-only public sets, read in their original format

NLI_LABELS = {"e": SUPPORT, "entailment": SUPPORT, "c": CONTRADICT, "contradiction": CONTRADICT,
              "n": IRRELEVANT, "neutral": IRRELEVANT, "SUPPORTS": SUPPORT, "REFUTES": CONTRADICT}
EVAL_ONLY = ("nan-nli", "anli", "taxinli", "control", "averitec", "fever-symmetric/symmetric_v0.2/fever_symmetric_test")
"""The sets (folders of ``nli_extra``, or a file stem) mined here; everything else in
``nli_extra`` is treated as training data."""
ANLI_DOUBTFUL_TAGS = frozenset({"Error", "Ambiguity", "Debatable", "Plausibility", "Likely", "Unlikely"})
"""ANLI annotation tags whose gold label rests on judgement, not on the text: not mined."""
MAX_PAIR_WORDS = 110
"""Mined pair passages longer than this are left out, so that the bare judge reads them whole."""


@dataclass(frozen=True)
class Row:
    source: str  # "dataset file row N"
    premise: str
    hypothesis: str
    label: str
    tags: frozenset[str] = frozenset()


def _csv_rows(path: Path, delimiter: str = ",") -> Iterator[tuple[int, dict[str, str]]]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        for i, row in enumerate(csv.DictReader(fh, delimiter=delimiter, quoting=csv.QUOTE_MINIMAL
                                               if delimiter == "," else csv.QUOTE_NONE), start=1):
            yield i, row


def load_nan_nli(root: Path) -> list[Row]:
    """NaN-NLI ``data/nan.csv``: premise, hypothesis, label (entailment / contradiction / neutral)."""
    path = root / "nan-nli/data/nan.csv"
    return [Row(f"nan-nli data/nan.csv row {i}", r["premise"], r["hypothesis"], NLI_LABELS[r["label"].strip()])
            for i, r in _csv_rows(path)]


def load_anli_dev(root: Path) -> list[Row]:
    """ANLI R1-R3 dev with annotations (``ANLI_analysis_r{1,2,3}_dev.csv``): context,
    statement, gold_label (e/n/c), tags (a Python list)."""
    out = []
    for r in (1, 2, 3):
        name = f"anli/anlizinganli/anli_annot_v0.2/ANLI_analysis_r{r}_dev.csv"
        for i, row in _csv_rows(root / name):
            tags = frozenset(ast.literal_eval(row["tags"])) if row["tags"].startswith("[") else frozenset()
            out.append(Row(f"anli {Path(name).name} row {i}", row["context"], row["statement"],
                           NLI_LABELS[row["gold_label"].strip()], tags))
    return out


TAXI_COLUMNS = ("lexical_linguistic", "syntactic_linguistic", "factivity_linguistic", "negation_logic",
                "boolean_logic", "quantifier_logic", "conditional_logic", "comparative_logic", "relational_reasoning",
                "spatial_reasoning", "temporal_reasoning", "causal_reasoning", "coreference_reasoning",
                "world_knowledge", "taxonomic_knowledge")


def load_taxinli(root: Path) -> list[Row]:
    """TaxiNLI ``taxinli10k.tsv`` (MNLI pairs): rows whose re-annotated label agrees with the
    MNLI gold label, with their reasoning categories as tags."""
    out = []
    for i, row in _csv_rows(root / "taxinli/taxinli10k.tsv", delimiter="\t"):
        if row["label"] != row["annotated_label"] or row["label"] not in NLI_LABELS:
            continue
        tags = frozenset(c for c in TAXI_COLUMNS if row.get(c, "0").strip() == "1") | {f"genre:{row['genre']}"}
        out.append(Row(f"taxinli taxinli10k.tsv row {i}", row["prem"], row["hyp"], NLI_LABELS[row["label"]], tags))
    return out


def detokenize(text: str) -> str:
    """FEVER's PTB tokens back to text (the training code's own ``detokenize``)."""
    from conflictscore_local.train.sources import detokenize as undo

    return undo(text)


def load_fever_symmetric_test(root: Path) -> list[Row]:
    """FEVER-Symmetric v0.2 **test** (claim, evidence sentence, SUPPORTS / REFUTES)."""
    path = root / "fever-symmetric/symmetric_v0.2/fever_symmetric_test.jsonl"
    out = []
    with path.open(encoding="utf-8") as fh:
        for i, line in enumerate(fh, start=1):
            if line.strip():
                r = json.loads(line)
                out.append(Row(f"fever-symmetric fever_symmetric_test.jsonl line {i}", detokenize(r["evidence"]),
                               detokenize(r["claim"]), NLI_LABELS[r["gold_label"]]))
    return out


def load_control_dev(root: Path) -> list[Row]:
    """ConTRoL ``data/dev.jsonl`` (long passage, hypothesis, e/c/n)."""
    out = []
    with (root / "control/data/dev.jsonl").open(encoding="utf-8") as fh:
        for i, line in enumerate(fh, start=1):
            if line.strip():
                r = json.loads(line)
                out.append(Row(f"control data/dev.jsonl line {i}", r["premise"], r["hypothesis"],
                               NLI_LABELS[r["label"]]))
    return out


def _training_strings(path: Path) -> Iterator[str]:
    """Every text field of a data file (JSON lines / JSON / CSV / TSV / one text a line)."""

    def walk(v: Any) -> Iterator[str]:
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            for x in v.values():
                yield from walk(x)
        elif isinstance(v, list):
            for x in v:
                yield from walk(x)

    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("cp1252")
    if path.suffix in (".jsonl", ".json"):
        for line in text.splitlines():
            line = line.strip()
            if line:
                try:
                    yield from walk(json.loads(line))
                except json.JSONDecodeError:
                    pass
    elif path.suffix in (".csv", ".tsv", ".txt"):
        delimiter = "," if path.suffix == ".csv" else "\t"
        for row in csv.reader(text.splitlines(), delimiter=delimiter):
            yield from row
    elif re.fullmatch(r"\.(raw\.input\d|dev|test)", "".join(path.suffixes)) or path.name.startswith(("s1.", "s2.")):
        yield from text.splitlines()


TRAINING_SOURCES = ("fever_nli", "esnli", "sick")
"""Sets of ``../shared/data`` (outside ``nli_extra``) that the shipped judge was trained on and
that the mined sets could share text with (FEVER, SNLI)."""


def training_index(data_dir: Path) -> Any:
    """The project's :class:`~conflictscore_local.bench.leakage.TextIndex` of every text a
    judge of this project was or may be trained on: all of ``nli_extra`` except the
    evaluation-only sets, plus FEVER NLI, e-SNLI and SICK. A mined probe that shares its
    claim or passage (or a sentence of six words or more) with it is dropped."""
    from conflictscore_local.bench.leakage import TextIndex

    index = TextIndex()
    extra = data_dir / "nli_extra"
    files = [p for p in sorted(extra.rglob("*")) if p.is_file() and p.parts[len(extra.parts)] != "_checks"]
    files = [p for p in files if not any(str(p.relative_to(extra)).startswith(e) for e in EVAL_ONLY)]
    files += [p for s in TRAINING_SOURCES for p in sorted((data_dir / s).glob("*")) if p.is_file()]
    for path in files:
        if path.name.lower().startswith(("readme", "license", "data_license")) or path.suffix in (".md", ".py"):
            continue
        for s in _training_strings(path):
            if len(s) >= 20:
                index.add_document(detokenize(s))
    return index


def _leaks(index: Any, row: Row) -> bool:
    return index is not None and (index.document_leaks(row.premise) or index.document_leaks(row.hypothesis))


def _sample(rows: Sequence[Row], per_label: int, rng: random.Random, used: set[str],
            labels: Sequence[str] = (SUPPORT, CONTRADICT, IRRELEVANT)) -> list[Row]:
    """Up to ``per_label`` rows of each label, not already used by another capability."""
    out = []
    for lab in labels:
        pool = [r for r in rows if r.label == lab and r.source not in used]
        picked = rng.sample(pool, min(per_label, len(pool)))
        used.update(r.source for r in picked)
        out += picked
    return out


def _short(r: Row) -> bool:
    return len(r.premise.split()) <= MAX_PAIR_WORDS


DIGIT = re.compile(r"\d")
CAPITALISED = re.compile(r"\b[A-Z][a-z]{2,}")


def _names(text: str) -> set[str]:
    """Capitalised words that are not sentence-initial function words: the names in ``text``."""
    return {w for w in CAPITALISED.findall(text) if w.lower() not in STOPWORDS}


def mined_probes(data_dir: Path, seed: int, capabilities: Sequence[str] = CAPABILITIES,
                 index: Any = None) -> tuple[dict[str, list[Probe]], dict[str, Any]]:
    """Probes from the evaluation-only sets in ``data_dir/nli_extra``, and what was dropped
    as shared with training data (``index``, see :func:`training_index`)."""
    root = data_dir / "nli_extra"
    info: dict[str, Any] = {"dropped_shared_with_training": Counter()}
    rows: dict[str, list[Row]] = {}
    for name, loader in (("nan-nli", load_nan_nli), ("anli", load_anli_dev), ("taxinli", load_taxinli),
                         ("fever-symmetric", load_fever_symmetric_test), ("control", load_control_dev)):
        kept = []
        for r in loader(root):
            if _leaks(index, r):
                info["dropped_shared_with_training"][name] += 1
            else:
                kept.append(r)
        rows[name] = kept
    info["rows_available"] = {k: len(v) for k, v in rows.items()}
    info["dropped_shared_with_training"] = dict(info["dropped_shared_with_training"])
    anli = [r for r in rows["anli"] if _short(r) and not r.tags & ANLI_DOUBTFUL_TAGS]
    taxi = [r for r in rows["taxinli"] if _short(r)]
    fever = rows["fever-symmetric"]
    out: dict[str, list[Probe]] = {}
    for cap in capabilities:
        rng = random.Random(f"{seed}:mined:{cap}")
        used: set[str] = set()
        b = _Builder(cap)
        picked: list[tuple[str, Row]] = []
        if cap == "negation":
            picked += [("nan-nli", r) for r in _sample(rows["nan-nli"], 14, rng, used)]
            picked += [("anli", r) for r in _sample([r for r in anli if "Negation" in r.tags], 6, rng, used)]
            picked += [("taxinli", r) for r in _sample([r for r in taxi if "negation_logic" in r.tags], 6, rng, used)]
            for _, r in picked:
                neg = "negated" if has_negation(r.hypothesis) else "affirmative"
                b.add(f"mined_{r.label.lower()}_{neg}_claim", r.hypothesis, r.premise, r.source, origin="mined",
                      label=r.label)
        elif cap == "numbers":
            num = [r for r in anli if r.tags & {"Numerical", "Dates", "Cardinal"} and DIGIT.search(r.hypothesis)]
            picked += [("anli", r) for r in _sample(num, 8, rng, used)]
            fnum = [r for r in fever if DIGIT.search(r.hypothesis) and DIGIT.search(r.premise)]
            picked += [("fever", r) for r in _sample(fnum, 18, rng, used, (SUPPORT, CONTRADICT))]
        elif cap == "entities":
            picked += [("anli", r) for r in _sample([r for r in anli if "Names" in r.tags], 6, rng, used)]
            fent = [r for r in fever if not DIGIT.search(r.hypothesis)]
            picked += [("fever", r) for r in _sample(fent, 20, rng, used, (SUPPORT, CONTRADICT))]
        elif cap == "off_topic":
            on_topic = [r for r in taxi if r.label == IRRELEVANT]
            for r in _sample(on_topic, 14, rng, used, (IRRELEVANT,)):
                b.add("mined_on_topic_neutral", r.hypothesis, r.premise, r.source, origin="mined", label=IRRELEVANT)
            for r in _sample([r for r in taxi if not r.tags & {"negation_logic"}], 7, rng, used, (SUPPORT, CONTRADICT)):
                b.add(f"mined_control_{r.label.lower()}", r.hypothesis, r.premise, r.source, origin="mined",
                      label=r.label)
            claims = rng.sample(fever, min(32, len(fever)))
            n_same = 0
            for c in claims:  # a claim against another row's evidence: shared words, no shared name or number
                cw, names = content_words(c.hypothesis), _names(c.hypothesis + " " + c.premise)
                ok = [e for e in fever if e is not c and cw & content_words(e.premise)
                      and not names & _names(e.premise)
                      and not set(re.findall(r"\d+", c.hypothesis)) & set(re.findall(r"\d+", e.premise))]
                if ok and n_same < 18:
                    e = rng.choice(ok)
                    b.add("mined_same_domain_cross_pair", c.hypothesis, e.premise,
                          f"{c.source} (claim) x {e.source.split(' ', 2)[-1]} (evidence)", origin="mined",
                          label=IRRELEVANT)
                    n_same += 1
            other = [r for r in taxi if r.label in (SUPPORT, CONTRADICT, IRRELEVANT)]
            for c in rng.sample(fever, min(14, len(fever))):  # a Wikipedia claim against spoken or written English
                unrelated = [r for r in other if not content_words(c.hypothesis) & content_words(r.premise)]
                if not unrelated:
                    continue
                e = rng.choice(unrelated)
                b.add("mined_other_domain_cross_pair", c.hypothesis, e.premise,
                      f"{c.source} (claim) x {e.source} (premise)", origin="mined", label=IRRELEVANT)
        elif cap == "paraphrase":
            lex = [r for r in taxi if r.tags & {"lexical_linguistic", "syntactic_linguistic"}
                   and not r.tags & set(TAXI_COLUMNS[2:])]
            picked += [("taxinli", r) for r in _sample(lex, 24, rng, used, (SUPPORT, CONTRADICT))]
        elif cap == "long_document":
            long_rows = [r for r in rows["control"] if 150 <= len(r.premise.split()) <= 400]
            for r in _sample(long_rows, 15, rng, used):
                b.add(f"mined_{r.label.lower()}", r.hypothesis, r.premise, r.source, origin="mined", label=r.label,
                      document=True)
        if cap not in ("negation", "off_topic", "long_document"):
            for _, r in picked:
                b.add(f"mined_{r.label.lower()}", r.hypothesis, r.premise, r.source, origin="mined", label=r.label)
        out[cap] = b.probes
    info["not_mined"] = {
        "partial": "no evaluation-only set labels partially supported compound claims by this project's convention "
                   "(NLI sets call them neutral)",
        "averitec": "not used: its evidence is question-answer pairs and its verdicts often rest on the fact-checkers' "
                    "judgement of sources, not on text a judge reads",
    }
    return out, info
