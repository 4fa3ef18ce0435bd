CREATE DATABASE leadjobs;
CREATE DATABASE leadjobs_test;
