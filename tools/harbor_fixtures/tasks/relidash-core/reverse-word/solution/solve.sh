#!/bin/bash
printf %s 'ratsbob' > /app/reversed.txt
