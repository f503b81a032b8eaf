# jobcomp_health
