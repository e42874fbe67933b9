"""The performance auto-tuner: search strategies over the knobs of a program (tile sizes,
vector width, coarsening, threads...) with measured time as the cost (`search`), and the
programs it tunes (`programs`)."""
