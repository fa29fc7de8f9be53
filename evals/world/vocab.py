"""Vocabularies of the generated world: real countries, regions, genres, families, groups.

Everything the generator may say about an entity comes from these tables, so that a
single scanner (:mod:`logic_rag.evals.world.mentions`) can find every facet value a
document mentions. Values are real names (countries, languages, plant families, animal
groups); only entity names are invented. "Near" relations (neighbouring regions,
related genres) feed the lexical traps in the prose.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Country",
    "COUNTRIES",
    "COUNTRY_BY_NAME",
    "FILM_COUNTRIES",
    "FILM_GENRES",
    "RELATED_FILM_GENRES",
    "FILM_DECADES",
    "NOVEL_GENRES",
    "NONFICTION_GENRES",
    "RELATED_BOOK_GENRES",
    "BOOK_NATIONALITIES",
    "BOOK_SETTINGS",
    "NOVEL_THEMES",
    "NONFICTION_TOPICS",
    "BOOK_DECADES",
    "REGION_GROUPS",
    "REGION_GROUP_OF",
    "CONTINENT_OF_GROUP",
    "PlantFamily",
    "PLANT_FAMILIES",
    "HABITS",
    "PLANT_USES",
    "AnimalGroup",
    "ANIMAL_GROUPS",
    "ANIMAL_CLASSES",
    "HABITATS",
    "DIETS",
    "STATUSES",
    "decade_of",
    "FILM_TRAITS",
    "NOVEL_TRAITS",
    "DESCRIPTION_YEARS",
]


@dataclass(frozen=True)
class Country:
    """A real country: its name, adjective, main language, cities used as film settings."""

    name: str
    adjective: str
    language: str
    cities: tuple[str, ...]
    neighbours: tuple[str, ...]


COUNTRIES: tuple[Country, ...] = (
    Country(
        "United States",
        "American",
        "English",
        ("New York City", "Los Angeles", "Chicago", "San Francisco", "New Orleans"),
        ("Canada", "Mexico"),
    ),
    Country(
        "United Kingdom", "British", "English", ("London", "Edinburgh", "Liverpool"), ("Ireland",)
    ),
    Country("Ireland", "Irish", "English", ("Dublin", "Galway"), ("United Kingdom",)),
    Country(
        "France", "French", "French", ("Paris", "Marseille", "Lyon"), ("Italy", "Spain", "Germany")
    ),
    Country("Italy", "Italian", "Italian", ("Rome", "Milan", "Naples", "Venice"), ("France",)),
    Country("Spain", "Spanish", "Spanish", ("Madrid", "Barcelona", "Seville"), ("France",)),
    Country("Germany", "German", "German", ("Berlin", "Munich", "Hamburg"), ("France", "Poland")),
    Country("Poland", "Polish", "Polish", ("Warsaw", "Kraków"), ("Germany",)),
    Country("Sweden", "Swedish", "Swedish", ("Stockholm", "Gothenburg"), ("Denmark",)),
    Country("Denmark", "Danish", "Danish", ("Copenhagen", "Aarhus"), ("Sweden", "Germany")),
    Country("Russia", "Russian", "Russian", ("Moscow", "Saint Petersburg"), ("Poland",)),
    Country("Japan", "Japanese", "Japanese", ("Tokyo", "Osaka", "Kyoto"), ("South Korea",)),
    Country("South Korea", "South Korean", "Korean", ("Seoul", "Busan"), ("Japan", "China")),
    Country("China", "Chinese", "Mandarin", ("Beijing", "Shanghai"), ("South Korea", "India")),
    Country("India", "Indian", "Hindi", ("Mumbai", "Delhi", "Kolkata"), ("China",)),
    Country("Iran", "Iranian", "Persian", ("Tehran", "Isfahan"), ("Turkey",)),
    Country("Turkey", "Turkish", "Turkish", ("Istanbul", "Ankara"), ("Iran",)),
    Country("Egypt", "Egyptian", "Arabic", ("Cairo", "Alexandria"), ("Turkey",)),
    Country("Nigeria", "Nigerian", "English", ("Lagos", "Abuja"), ("Egypt",)),
    Country("Mexico", "Mexican", "Spanish", ("Mexico City", "Guadalajara"), ("United States",)),
    Country("Brazil", "Brazilian", "Portuguese", ("Rio de Janeiro", "São Paulo"), ("Argentina",)),
    Country("Argentina", "Argentine", "Spanish", ("Buenos Aires", "Córdoba"), ("Brazil",)),
    Country(
        "Canada", "Canadian", "English", ("Toronto", "Montreal", "Vancouver"), ("United States",)
    ),
    Country("Australia", "Australian", "English", ("Sydney", "Melbourne"), ("New Zealand",)),
    Country("New Zealand", "New Zealand", "English", ("Auckland", "Wellington"), ("Australia",)),
)
COUNTRY_BY_NAME: dict[str, Country] = {c.name: c for c in COUNTRIES}

# Film-producing countries (weights roughly follow real output: American films dominate).
FILM_COUNTRIES: tuple[tuple[str, float], ...] = (
    ("United States", 8.0),
    ("United Kingdom", 3.0),
    ("France", 3.0),
    ("Italy", 2.5),
    ("Japan", 2.5),
    ("India", 2.0),
    ("Germany", 1.5),
    ("Spain", 1.5),
    ("South Korea", 1.2),
    ("Mexico", 1.0),
    ("Sweden", 0.8),
    ("Denmark", 0.6),
    ("Poland", 0.6),
    ("Russia", 1.0),
    ("China", 1.2),
    ("Iran", 0.6),
    ("Turkey", 0.6),
    ("Egypt", 0.5),
    ("Nigeria", 0.5),
    ("Brazil", 0.8),
    ("Argentina", 0.6),
    ("Canada", 1.0),
    ("Australia", 0.9),
    ("Ireland", 0.5),
)

FILM_GENRES: tuple[str, ...] = (
    "crime",
    "comedy",
    "drama",
    "horror",
    "science fiction",
    "war",
    "romance",
    "thriller",
    "musical",
    "documentary",
    "animated",
    "fantasy",
    "adventure",
)
RELATED_FILM_GENRES: dict[str, tuple[str, ...]] = {
    "crime": ("thriller", "drama"),
    "comedy": ("romance", "musical"),
    "drama": ("romance", "war"),
    "horror": ("thriller", "fantasy"),
    "science fiction": ("fantasy", "adventure"),
    "war": ("drama", "adventure"),
    "romance": ("comedy", "drama"),
    "thriller": ("crime", "horror"),
    "musical": ("comedy", "romance"),
    "documentary": ("drama", "war"),
    "animated": ("fantasy", "comedy"),
    "fantasy": ("science fiction", "adventure"),
    "adventure": ("fantasy", "war"),
}
FILM_DECADES: tuple[str, ...] = tuple(f"{d}s" for d in range(1930, 2020, 10))

NOVEL_GENRES: tuple[str, ...] = (
    "crime",
    "science fiction",
    "fantasy",
    "historical",
    "romance",
    "horror",
    "thriller",
    "mystery",
    "dystopian",
    "adventure",
)
NONFICTION_GENRES: tuple[str, ...] = (
    "travel",
    "history",
    "biography",
    "essay",
    "popular science",
    "memoir",
)
RELATED_BOOK_GENRES: dict[str, tuple[str, ...]] = {
    "crime": ("mystery", "thriller"),
    "science fiction": ("dystopian", "fantasy"),
    "fantasy": ("science fiction", "adventure"),
    "historical": ("romance", "adventure"),
    "romance": ("historical",),
    "horror": ("thriller", "fantasy"),
    "thriller": ("crime", "mystery"),
    "mystery": ("crime", "thriller"),
    "dystopian": ("science fiction",),
    "adventure": ("fantasy", "historical"),
    "travel": ("memoir", "history"),
    "history": ("biography", "travel"),
    "biography": ("memoir", "history"),
    "essay": ("memoir",),
    "popular science": ("history", "essay"),
    "memoir": ("biography", "travel"),
}
BOOK_NATIONALITIES: tuple[tuple[str, float], ...] = (
    ("United States", 6.0),
    ("United Kingdom", 4.0),
    ("Ireland", 1.0),
    ("France", 2.0),
    ("Canada", 1.5),
    ("Australia", 1.2),
    ("New Zealand", 0.5),
    ("Germany", 1.2),
    ("Russia", 1.0),
    ("Japan", 1.2),
    ("India", 1.0),
    ("Nigeria", 0.7),
    ("Italy", 1.0),
    ("Spain", 0.8),
    ("Mexico", 0.6),
    ("Argentina", 0.6),
    ("Sweden", 0.7),
    ("Poland", 0.5),
)
# Settings of novels, grouped so that near-miss traps name a neighbouring place.
BOOK_SETTINGS: dict[str, tuple[str, ...]] = {
    "New England": ("Massachusetts", "Maine", "Vermont", "Connecticut"),
    "American South": ("Louisiana", "Mississippi", "Georgia (U.S. state)", "Alabama"),
    "American West": ("California", "Texas", "Montana", "Alaska"),
    "British Isles": ("London", "Scotland", "Yorkshire", "Dublin"),
    "Europe": ("Paris", "Venice", "Berlin", "Vienna"),
    "Asia": ("Tokyo", "Mumbai", "Shanghai", "Kyoto"),
    "Elsewhere": ("Cairo", "Sydney", "Buenos Aires", "Mexico City"),
}
NOVEL_THEMES: tuple[str, ...] = (
    "war",
    "slavery",
    "immigration",
    "artificial intelligence",
    "time travel",
    "revenge",
    "families",
    "friendship",
    "religion",
    "the sea",
)
NONFICTION_TOPICS: tuple[str, ...] = (
    "the Cold War",
    "the Qing dynasty",
    "the Ottoman Empire",
    "the French Revolution",
    "climate change",
    "mountaineering",
    "the Silk Road",
    "the Roman Empire",
    "jazz",
    "the Space Race",
)
BOOK_DECADES: tuple[str, ...] = tuple(f"{d}s" for d in range(1920, 2020, 10))

# Regions for plants and animals: real countries grouped by biogeographic neighbourhood.
REGION_GROUPS: dict[str, tuple[str, ...]] = {
    "Southeast Asia": (
        "Malaysia",
        "Thailand",
        "Indonesia",
        "the Philippines",
        "Vietnam",
        "Myanmar",
        "Laos",
        "Cambodia",
    ),
    "South Asia": ("India", "Sri Lanka", "Nepal", "Bangladesh"),
    "East Asia": ("China", "Japan", "Taiwan", "Korea"),
    "Oceania": ("Australia", "New Zealand", "Papua New Guinea", "Fiji", "New Caledonia"),
    "Africa": ("Madagascar", "South Africa", "Kenya", "Tanzania", "Cameroon", "Ethiopia"),
    "South America": (
        "Brazil",
        "Peru",
        "Bolivia",
        "Colombia",
        "Ecuador",
        "Venezuela",
        "Argentina",
        "Chile",
    ),
    "Central America": ("Mexico", "Guatemala", "Costa Rica", "Panama", "Belize", "Cuba", "Jamaica"),
    "North America": ("the United States", "Canada"),
    "Europe": ("Spain", "Italy", "Greece", "France", "Portugal"),
}
REGION_GROUP_OF: dict[str, str] = {c: g for g, cs in REGION_GROUPS.items() for c in cs}
CONTINENT_OF_GROUP: dict[str, str] = {
    "Southeast Asia": "Asia",
    "South Asia": "Asia",
    "East Asia": "Asia",
    "Oceania": "Oceania",
    "Africa": "Africa",
    "South America": "South America",
    "Central America": "North America",
    "North America": "North America",
    "Europe": "Europe",
}


@dataclass(frozen=True)
class PlantFamily:
    """A real plant family: Latin name, category name, common noun, habits, genus stems."""

    latin: str
    category: str
    common: str
    habits: tuple[str, ...]
    groups: tuple[str, ...]
    related: str
    genus_suffixes: tuple[str, ...]
    uses: tuple[str, ...]


_TROPICS = ("Southeast Asia", "South Asia", "Oceania", "Africa", "South America", "Central America")
PLANT_FAMILIES: tuple[PlantFamily, ...] = (
    PlantFamily(
        "Orchidaceae",
        "Orchids",
        "orchid",
        ("epiphyte", "herb"),
        _TROPICS + ("East Asia",),
        "Bromeliaceae",
        ("anthe", "orchis", "glossum", "bium"),
        ("ornamental", "medicinal"),
    ),
    PlantFamily(
        "Arecaceae",
        "Arecaceae",
        "palm",
        ("tree", "shrub", "climber"),
        _TROPICS,
        "Cycadaceae",
        ("phoenix", "calamus", "areca"),
        ("edible fruit", "fibre", "ornamental"),
    ),
    PlantFamily(
        "Fabaceae",
        "Fabaceae",
        "legume",
        ("tree", "shrub", "herb", "climber"),
        tuple(REGION_GROUPS),
        "Rosaceae",
        ("lobium", "carpus", "acacia"),
        ("timber", "dye", "medicinal", "ornamental"),
    ),
    PlantFamily(
        "Cactaceae",
        "Cacti",
        "cactus",
        ("shrub", "tree", "epiphyte"),
        ("Central America", "South America", "North America"),
        "Euphorbiaceae",
        ("cereus", "opuntia", "cactus"),
        ("ornamental", "edible fruit"),
    ),
    PlantFamily(
        "Bromeliaceae",
        "Bromeliaceae",
        "bromeliad",
        ("epiphyte", "herb"),
        ("Central America", "South America"),
        "Orchidaceae",
        ("tillandsia", "aechmea"),
        ("ornamental", "fibre"),
    ),
    PlantFamily(
        "Zingiberaceae",
        "Zingiberaceae",
        "ginger",
        ("herb",),
        ("Southeast Asia", "South Asia", "East Asia"),
        "Marantaceae",
        ("zingiber", "curcuma"),
        ("spice", "medicinal", "dye"),
    ),
    PlantFamily(
        "Rosaceae",
        "Rosaceae",
        "rose",
        ("tree", "shrub", "herb"),
        ("Europe", "East Asia", "North America"),
        "Fabaceae",
        ("rubus", "prunus", "sorbus"),
        ("edible fruit", "ornamental", "medicinal"),
    ),
    PlantFamily(
        "Lamiaceae",
        "Lamiaceae",
        "mint",
        ("herb", "shrub"),
        ("Europe", "Africa", "South Asia", "Central America"),
        "Verbenaceae",
        ("mentha", "salvia", "thymus"),
        ("spice", "medicinal", "ornamental"),
    ),
    PlantFamily(
        "Myrtaceae",
        "Myrtaceae",
        "myrtle",
        ("tree", "shrub"),
        ("Oceania", "South America", "Southeast Asia"),
        "Melastomataceae",
        ("myrtus", "eugenia", "calyptus"),
        ("timber", "spice", "edible fruit"),
    ),
    PlantFamily(
        "Dipterocarpaceae",
        "Dipterocarpaceae",
        "dipterocarp",
        ("tree",),
        ("Southeast Asia", "South Asia"),
        "Malvaceae",
        ("dipterocarpus", "shorea", "hopea"),
        ("timber",),
    ),
    PlantFamily(
        "Ericaceae",
        "Ericaceae",
        "heath",
        ("shrub", "tree"),
        ("Europe", "East Asia", "North America", "Africa"),
        "Rosaceae",
        ("erica", "rhododendron", "vaccinium"),
        ("ornamental", "edible fruit"),
    ),
    PlantFamily(
        "Proteaceae",
        "Proteaceae",
        "protea",
        ("shrub", "tree"),
        ("Oceania", "Africa"),
        "Myrtaceae",
        ("protea", "banksia", "grevillea"),
        ("ornamental",),
    ),
    PlantFamily(
        "Begoniaceae",
        "Begonias",
        "begonia",
        ("herb",),
        ("Southeast Asia", "South America", "Africa", "Central America"),
        "Gesneriaceae",
        ("begonia",),
        ("ornamental",),
    ),
    PlantFamily(
        "Solanaceae",
        "Solanaceae",
        "nightshade",
        ("herb", "shrub", "climber"),
        ("South America", "Central America", "Africa"),
        "Convolvulaceae",
        ("solanum", "physalis", "capsicum"),
        ("edible fruit", "medicinal", "spice"),
    ),
    PlantFamily(
        "Lauraceae",
        "Lauraceae",
        "laurel",
        ("tree", "shrub"),
        ("Southeast Asia", "South America", "East Asia", "Central America"),
        "Myristicaceae",
        ("laurus", "cinnamomum", "litsea"),
        ("spice", "timber", "medicinal"),
    ),
)
HABITS: tuple[str, ...] = ("tree", "shrub", "herb", "climber", "epiphyte")
PLANT_USES: tuple[str, ...] = (
    "medicinal",
    "ornamental",
    "edible fruit",
    "timber",
    "spice",
    "fibre",
    "dye",
)


@dataclass(frozen=True)
class AnimalGroup:
    """An order-like animal group within a class, with the noun used in common names."""

    category: str
    singular: str
    animal_class: str
    groups: tuple[str, ...]
    habitats: tuple[str, ...]
    diets: tuple[str, ...]
    genus_suffixes: tuple[str, ...]
    common_nouns: tuple[str, ...]
    related: str


_ALL = tuple(REGION_GROUPS)
_AMERICAS = ("South America", "Central America", "North America")
_OLD_TROPICS = ("Southeast Asia", "South Asia", "Africa", "Oceania")
ANIMAL_GROUPS: tuple[AnimalGroup, ...] = (
    AnimalGroup(
        "Rodents",
        "rodent",
        "mammal",
        _ALL,
        ("rainforest", "grassland", "desert", "montane"),
        ("herbivorous", "omnivorous"),
        ("mys", "sciurus"),
        ("rat", "mouse", "squirrel"),
        "Marsupials",
    ),
    AnimalGroup(
        "Bats",
        "bat",
        "mammal",
        _ALL,
        ("rainforest", "cave", "desert"),
        ("insectivorous", "frugivorous"),
        ("nycteris", "pteropus"),
        ("leaf-nosed bat", "fruit bat"),
        "Rodents",
    ),
    AnimalGroup(
        "Carnivorans",
        "carnivoran",
        "mammal",
        _ALL,
        ("rainforest", "grassland", "montane", "wetland"),
        ("carnivorous", "omnivorous"),
        ("cyon", "felis", "mustela"),
        ("cat", "weasel", "civet"),
        "Marsupials",
    ),
    AnimalGroup(
        "Primates",
        "primate",
        "mammal",
        _OLD_TROPICS[:3] + ("South America", "Central America"),
        ("rainforest", "montane"),
        ("frugivorous", "omnivorous", "herbivorous"),
        ("pithecus", "cebus", "lemur"),
        ("monkey", "lemur", "loris"),
        "Rodents",
    ),
    AnimalGroup(
        "Even-toed ungulates",
        "even-toed ungulate",
        "mammal",
        _ALL,
        ("grassland", "montane", "rainforest", "desert"),
        ("herbivorous",),
        ("cervus", "capra", "bos"),
        ("deer", "antelope", "duiker"),
        "Odd-toed ungulates",
    ),
    AnimalGroup(
        "Odd-toed ungulates",
        "odd-toed ungulate",
        "mammal",
        ("Africa", "Southeast Asia", "South Asia", "South America"),
        ("grassland", "rainforest"),
        ("herbivorous",),
        ("therium", "tapirus", "equus"),
        ("tapir", "rhinoceros", "zebra"),
        "Even-toed ungulates",
    ),
    AnimalGroup(
        "Marsupials",
        "marsupial",
        "mammal",
        ("Oceania", "South America"),
        ("rainforest", "grassland", "desert"),
        ("herbivorous", "insectivorous", "omnivorous"),
        ("phalanger", "dasyurus", "macropus"),
        ("possum", "wallaby", "quoll"),
        "Rodents",
    ),
    AnimalGroup(
        "Parrots",
        "parrot",
        "bird",
        _OLD_TROPICS + _AMERICAS[:2],
        ("rainforest", "grassland"),
        ("frugivorous", "herbivorous"),
        ("psitta", "ara", "cacatua"),
        ("parrot", "lorikeet", "parakeet"),
        "Pigeons and doves",
    ),
    AnimalGroup(
        "Birds of prey",
        "bird of prey",
        "bird",
        _ALL,
        ("grassland", "montane", "desert", "wetland"),
        ("carnivorous", "piscivorous"),
        ("aquila", "buteo", "falco"),
        ("eagle", "hawk", "falcon"),
        "Owls",
    ),
    AnimalGroup(
        "Owls",
        "owl",
        "bird",
        _ALL,
        ("rainforest", "grassland", "desert"),
        ("carnivorous", "insectivorous"),
        ("strix", "otus", "bubo"),
        ("owl", "scops owl"),
        "Birds of prey",
    ),
    AnimalGroup(
        "Hummingbirds",
        "hummingbird",
        "bird",
        _AMERICAS,
        ("rainforest", "montane"),
        ("nectarivorous",),
        ("trochilus", "amazilia"),
        ("hummingbird", "sunangel"),
        "Parrots",
    ),
    AnimalGroup(
        "Pigeons and doves",
        "pigeon",
        "bird",
        _ALL,
        ("rainforest", "grassland"),
        ("frugivorous", "herbivorous"),
        ("columba", "ptilinopus"),
        ("pigeon", "dove", "fruit dove"),
        "Parrots",
    ),
    AnimalGroup(
        "Snakes",
        "snake",
        "reptile",
        _ALL,
        ("rainforest", "desert", "grassland", "wetland"),
        ("carnivorous",),
        ("ophis", "boa", "naja"),
        ("viper", "racer", "python"),
        "Lizards",
    ),
    AnimalGroup(
        "Lizards",
        "lizard",
        "reptile",
        _ALL,
        ("desert", "rainforest", "grassland"),
        ("insectivorous", "herbivorous", "omnivorous"),
        ("saurus", "lacerta", "anolis"),
        ("gecko", "skink", "anole"),
        "Snakes",
    ),
    AnimalGroup(
        "Turtles",
        "turtle",
        "reptile",
        _ALL,
        ("freshwater", "marine", "wetland"),
        ("omnivorous", "herbivorous"),
        ("chelys", "emys", "testudo"),
        ("terrapin", "tortoise", "slider"),
        "Crocodilians",
    ),
    AnimalGroup(
        "Crocodilians",
        "crocodilian",
        "reptile",
        _OLD_TROPICS + _AMERICAS[:2],
        ("freshwater", "wetland"),
        ("carnivorous", "piscivorous"),
        ("crocodylus", "caiman"),
        ("crocodile", "caiman"),
        "Turtles",
    ),
    AnimalGroup(
        "Frogs",
        "frog",
        "amphibian",
        _ALL,
        ("rainforest", "wetland", "freshwater", "montane"),
        ("insectivorous",),
        ("hyla", "rana", "batrachus"),
        ("tree frog", "toad", "frog"),
        "Salamanders",
    ),
    AnimalGroup(
        "Salamanders",
        "salamander",
        "amphibian",
        ("Europe", "North America", "Central America", "East Asia"),
        ("freshwater", "montane", "cave"),
        ("insectivorous", "carnivorous"),
        ("triton", "molge", "ambystoma"),
        ("newt", "salamander"),
        "Frogs",
    ),
    AnimalGroup(
        "Catfish",
        "catfish",
        "fish",
        _ALL,
        ("freshwater",),
        ("omnivorous", "carnivorous"),
        ("silurus", "clarias", "pimelodus"),
        ("catfish",),
        "Cichlids",
    ),
    AnimalGroup(
        "Cichlids",
        "cichlid",
        "fish",
        ("Africa", "South America", "Central America", "South Asia"),
        ("freshwater",),
        ("omnivorous", "herbivorous", "piscivorous"),
        ("chromis", "cichla", "tilapia"),
        ("cichlid",),
        "Catfish",
    ),
    AnimalGroup(
        "Sharks",
        "shark",
        "fish",
        _ALL,
        ("marine",),
        ("carnivorous", "piscivorous"),
        ("carcharias", "squalus", "galeus"),
        ("shark", "dogfish"),
        "Catfish",
    ),
    AnimalGroup(
        "Beetles",
        "beetle",
        "insect",
        _ALL,
        ("rainforest", "grassland", "desert", "cave"),
        ("herbivorous", "carnivorous", "omnivorous"),
        ("carabus", "cerambyx", "scarabaeus"),
        ("beetle", "weevil", "longhorn"),
        "Moths",
    ),
    AnimalGroup(
        "Butterflies",
        "butterfly",
        "insect",
        _ALL,
        ("rainforest", "grassland", "montane"),
        ("nectarivorous", "herbivorous"),
        ("papilio", "morpho", "danaus"),
        ("swallowtail", "butterfly"),
        "Moths",
    ),
    AnimalGroup(
        "Moths",
        "moth",
        "insect",
        _ALL,
        ("rainforest", "grassland", "montane", "desert"),
        ("herbivorous", "nectarivorous"),
        ("noctua", "sphinx", "arctia"),
        ("moth", "hawk-moth"),
        "Butterflies",
    ),
    AnimalGroup(
        "Dragonflies",
        "dragonfly",
        "insect",
        _ALL,
        ("wetland", "freshwater"),
        ("carnivorous", "insectivorous"),
        ("aeshna", "libellula", "gomphus"),
        ("dragonfly", "darter"),
        "Butterflies",
    ),
)
ANIMAL_CLASSES: dict[str, str] = {
    "mammal": "Mammals",
    "bird": "Birds",
    "reptile": "Reptiles",
    "amphibian": "Amphibians",
    "fish": "Fish",
    "insect": "Insects",
}
HABITATS: tuple[str, ...] = (
    "rainforest",
    "desert",
    "grassland",
    "wetland",
    "freshwater",
    "marine",
    "montane",
    "cave",
)
DIETS: tuple[str, ...] = (
    "herbivorous",
    "carnivorous",
    "insectivorous",
    "omnivorous",
    "piscivorous",
    "frugivorous",
    "nectarivorous",
)
STATUSES: tuple[tuple[str, float], ...] = (
    ("least concern", 5.0),
    ("near threatened", 1.5),
    ("vulnerable", 1.2),
    ("endangered", 1.0),
    ("critically endangered", 0.5),
)


def decade_of(year: int) -> str:
    """The decade label of a year, as QUEST category names write it ("1970s")."""
    return f"{year // 10 * 10}s"


# Film traits with their Wikipedia-style category names.
FILM_TRAITS: dict[str, str] = {
    "based on a novel": "Films based on novels",
    "directorial debut": "Directorial debut films",
    "black-and-white": "Black-and-white films",
    "remake": "Film remakes",
}
NOVEL_TRAITS: dict[str, str] = {
    "debut": "Debut novels",
    "adapted into film": "Novels adapted into films",
    "serialized": "Novels first published in serial form",
}
# Years in which species were formally described; 1753 (plants, Linnaeus' Species
# Plantarum) and 1758 (animals, Systema Naturae 10th ed.) are the famous starting points.
DESCRIPTION_YEARS: dict[str, tuple[int, int, int]] = {
    "plants": (1753, 1760, 2015),
    "animals": (1758, 1760, 2015),
}
