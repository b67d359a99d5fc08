#!/bin/bash
#SBATCH -p mit_normal
#SBATCH -c 2
#SBATCH -o log.mnist-%j

export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK
module load miniforge
python -u mnist_timed.py
