#!/bin/bash
printf %s 'thesis' > /app/essay.txt
