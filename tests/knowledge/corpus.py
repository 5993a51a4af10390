"""A small fixed corpus: five documents on unrelated topics, and questions whose answer is in one of them."""

DOCUMENTS = {
    "volcanoes.md": (
        "# Volcanoes\n\nA volcano is a rupture in the crust of a planet where molten rock, ash and gases escape "
        "from a magma chamber below the surface. Eruptions can be explosive, throwing ash kilometres into the sky, "
        "or effusive, with lava flowing slowly down the slopes."
    ),
    "sourdough.md": (
        "# Sourdough bread\n\nSourdough is bread leavened by a starter of wild yeast and lactic acid bacteria. "
        "Feed the starter with flour and water, let the dough ferment overnight, shape the loaf and bake it in a "
        "very hot Dutch oven for a crisp crust."
    ),
    "tides.md": (
        "# Ocean tides\n\nTides are the regular rise and fall of sea level caused by the gravitational pull of the "
        "Moon and the Sun on the oceans. Most coasts see two high tides and two low tides every lunar day."
    ),
    "photosynthesis.md": (
        "# Photosynthesis\n\nPlants convert sunlight, water and carbon dioxide into glucose and oxygen. The green "
        "pigment chlorophyll in the chloroplasts of leaves absorbs the light energy that drives the reaction."
    ),
    "tcp.md": (
        "# TCP handshake\n\nA TCP connection starts with a three-way handshake: the client sends SYN, the server "
        "answers SYN-ACK and the client replies ACK. Sequence numbers then let both sides order and acknowledge "
        "the bytes they receive."
    ),
}

QUESTIONS = {
    "How do I bake bread with a wild yeast starter?": "sourdough.md",
    "Why does the sea level go up and down twice a day?": "tides.md",
    "What comes out of a magma chamber during an eruption?": "volcanoes.md",
    "How do leaves turn light into sugar?": "photosynthesis.md",
    "What packets open a network connection between client and server?": "tcp.md",
}
