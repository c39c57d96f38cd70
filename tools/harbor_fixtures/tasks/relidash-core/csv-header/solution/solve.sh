#!/bin/bash
printf %s 'id,name,score' > /app/header.csv
